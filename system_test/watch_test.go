package system_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/addrwatch/addrwatch/chain"
)

// followerStats is the follower's part of GET /admin/v1/cluster.
type followerStats struct {
	Sweeps, Addresses, Requests, Observations, Failures int64
	Tip                                                 struct {
		Height int64
		Hash   string
	}
}

// waitObserved waits until the node's follower has proposed at least n
// observations, as its admin status says.
func waitObserved(t *testing.T, s *server, n int64) followerStats {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second) // a sweep every 10 s without a new tip
	for {
		r := do(t, "GET", s.AdminURL+"/admin/v1/cluster", s.AdminToken, nil)
		expect(t, r, http.StatusOK, "")
		var st struct{ Follower *followerStats }
		if err := json.Unmarshal(r.Body, &st); err != nil || st.Follower == nil {
			t.Fatalf("status without the follower: %v\n%s", err, r.Body)
		}
		if st.Follower.Observations >= n {
			return *st.Follower
		}
		if time.Now().After(deadline) {
			t.Fatalf("the follower proposed %d observations, want %d: %+v", st.Follower.Observations, n, *st.Follower)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// Once the chain follower has observed a card's address, its balance is
// read from the account's replicated record, not from the explorer: with
// the explorer failing every request, a forced refresh of the History
// summary is degraded (its transactions come from the explorer), and the
// card's balance is still known: the explorer's figures from when the
// follower read them. The admin status shows the follower at work.
func TestBalancesComeFromTheFollowersRecord(t *testing.T) {
	t.Parallel()
	s, sim := hiSimUpstream(t)
	e := spSetup(t, s, "extended", "read")
	apCreateCard(t, s, e.write, map[string]any{"address": hiHubQ, "name": "hub"})
	want := hbWant(t, hiHubQ)
	st := waitObserved(t, s, 1)
	if st.Sweeps == 0 || st.Addresses == 0 || st.Requests < 3 || st.Tip.Hash == "" {
		t.Errorf("the follower's status: %+v", st)
	}

	sim.SetFault(chain.SimFault{Status: http.StatusBadGateway})
	r := do(t, "GET", s.URL+"/v1/history?force_refresh=true", e.read, nil)
	sim.SetFault(chain.SimFault{})
	expect(t, r, http.StatusOK, "")
	var v hbSummary
	if err := json.Unmarshal(r.Body, &v); err != nil || len(v.Cards) != 1 {
		t.Fatalf("History summary: %v\n%s", err, r.Body)
	}
	if !v.HistoryDegraded {
		t.Error("the History read the failing explorer and was not degraded")
	}
	if got, exp := hbJSON(v.Cards[0].Balance), hbJSON(want); got != exp {
		t.Errorf("the observed balance with the explorer down\n got %s\nwant %s", got, exp)
	}

	// The owner reads the record itself: the address, its totals at the
	// tip and its newest transactions, confirmed in their blocks.
	r = do(t, "GET", s.URL+"/owner/v1/watched", e.acct.OwnerSecret, nil)
	expect(t, r, http.StatusOK, "")
	var w struct {
		Addresses []struct {
			Address      string
			Observed     bool
			TipHash      string `json:"tip_hash"`
			Transactions []struct {
				TxID      string
				State     string
				Height    int64
				BlockHash string `json:"block_hash"`
			}
		}
	}
	if err := json.Unmarshal(r.Body, &w); err != nil || len(w.Addresses) != 1 || !w.Addresses[0].Observed || w.Addresses[0].TipHash != st.Tip.Hash {
		t.Fatalf("GET /owner/v1/watched: %v\n%s", err, r.Body)
	}
	states := map[string]int{}
	for _, tx := range w.Addresses[0].Transactions {
		states[tx.State]++
		if tx.State == "confirmed" && (tx.Height == 0 || len(tx.BlockHash) != 64) {
			t.Errorf("a confirmed transaction without its block: %+v", tx)
		}
	}
	if states["confirmed"] != chain.ChainPageSize || states["mempool"] != int(*want.UnconfirmedTxCount) {
		t.Errorf("recorded %v, want the newest page confirmed and the mempool's %d", states, *want.UnconfirmedTxCount)
	}
	expect(t, do(t, "GET", s.URL+"/owner/v1/watched", e.read, nil), http.StatusUnauthorized, "")
}
