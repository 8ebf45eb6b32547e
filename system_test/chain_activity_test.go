//go:build unix

package system_test

import (
	"context"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/addrwatch/addrwatch/client"
	"github.com/addrwatch/addrwatch/internal/regtest"
)

// pollChainUntil polls the chain activity with p until the events polled
// so far (all, which it extends) hold one of txid of each kind in kinds,
// and returns them.
func pollChainUntil(t *testing.T, s *server, p *client.ChainActivityPoller, all []client.ChainEvent, txid string, kinds ...string) []client.ChainEvent {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		events, err := p.Poll(ctx)
		if err != nil && ctx.Err() == nil {
			t.Fatalf("polling the chain activity: %v", err)
		}
		all = append(all, events...)
		var got []string
		for _, e := range all {
			if e.Txid == txid {
				got = append(got, string(e.Kind))
			}
		}
		if slices.Equal(got, kinds) {
			return all
		}
		if ctx.Err() != nil || len(got) > len(kinds) {
			t.Fatalf("the chain activity of %s: %v, want %v; the node's follower said:\n%s", txid, got, kinds, followerLines(s))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// activitySince is GET /v1/history/activity from since (an RFC 3339
// time) for key: the events' kinds and IDs, in order.
func activitySince(t *testing.T, s *server, key string, since time.Time) (kinds, ids []string) {
	t.Helper()
	r := do(t, "GET", s.URL+"/v1/history/activity?since="+url.QueryEscape(since.Format(time.RFC3339Nano)), key, nil)
	expect(t, r, http.StatusOK, "")
	for _, e := range r.JSON(t)["events"].([]any) {
		kinds, ids = append(kinds, e.(map[string]any)["kind"].(string)), append(ids, e.(map[string]any)["id"].(string))
	}
	return kinds, ids
}

// A payment to a watched address on a btcd regtest chain reaches the
// agents' chain activity, polled over loopback HTTP with the Go client's
// poller: tx_seen from the mempool, tx_confirmed in its block, tx_deep
// when the fifth block after it (none of which touches the address) makes
// it six deep. The events keep their IDs when read again from a time; a
// grant removed hides them on the very next request, and given back shows
// them again; a read key and a write key read the same; a bad since or
// limit is refused with 422 VALIDATION.
func TestChainActivityOfARegtestPayment(t *testing.T) {
	t.Parallel()
	node := regtest.Own(t) // it mines and reorgs: a chain no other test sees
	rpc := node.RPC()
	cert := filepath.Join(t.TempDir(), "rpc.cert")
	if err := os.WriteFile(cert, rpc.Cert, 0o600); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, "--network", "regtest", "--chain", "btcd:"+rpc.URL().String(), "--chain-cert", cert, "--chain-poll", "200ms")
	acct := s.createAccount(t, "extended")
	payee, err := node.NewKey(regtest.P2WPKH)
	if err != nil {
		t.Fatal(err)
	}
	cardID := apOwnerCreateCard(t, s, acct, payee.Address, "payee")["id"].(string)
	read, write := s.createKey(t, acct, "read"), s.createKey(t, acct, "write")
	apGrantCard(t, s, acct, cardID, "read")
	agent, err := client.New(s.URL, read, nil)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now().Add(-time.Minute)
	poller := agent.NewChainActivity("")

	txid, err := node.Pay(payee.Address, 50_000)
	if err != nil {
		t.Fatal(err)
	}
	all := pollChainUntil(t, s, poller, nil, txid, "tx_seen")
	blocks, err := node.Mine(1)
	if err != nil {
		t.Fatal(err)
	}
	all = pollChainUntil(t, s, poller, all, txid, "tx_seen", "tx_confirmed")
	if _, err := node.MineEmpty(4); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second) // four blocks: one short of deep
	all = pollChainUntil(t, s, poller, all, txid, "tx_seen", "tx_confirmed")
	if _, err := node.MineEmpty(1); err != nil {
		t.Fatal(err)
	}
	all = pollChainUntil(t, s, poller, all, txid, "tx_seen", "tx_confirmed", "tx_deep")

	seen, confirmed, deep := all[0], all[1], all[2]
	for _, e := range all {
		if e.CardId != cardID || e.SpaceId != nil || e.Address != payee.Address || e.AmountSat != 50_000 {
			t.Errorf("%s: card %s (Space %v), address %s, amount %d; want the payee's card and 50000", e.Kind, e.CardId, e.SpaceId, e.Address, e.AmountSat)
		}
	}
	if seen.Height != nil || seen.BlockHash != nil || seen.Confirmations != nil {
		t.Errorf("tx_seen names a block: %+v", seen)
	}
	if confirmed.BlockHash == nil || *confirmed.BlockHash != blocks[0] || confirmed.Height == nil || confirmed.Confirmations == nil || *confirmed.Confirmations != 1 {
		t.Errorf("tx_confirmed: %+v, want block %s at 1 confirmation", confirmed, blocks[0])
	}
	if deep.BlockHash == nil || *deep.BlockHash != blocks[0] || deep.Confirmations == nil || *deep.Confirmations != 6 || *deep.Height != *confirmed.Height {
		t.Errorf("tx_deep: %+v, want block %s at 6 confirmations", deep, blocks[0])
	}
	ids := []string{seen.Id, confirmed.Id, deep.Id}
	if ids[0] == ids[1] || ids[1] == ids[2] || ids[0] == ids[2] {
		t.Errorf("the three events share IDs: %v", ids)
	}

	// Read again from a time, by either key: the same events, the same IDs.
	want := []string{"tx_seen", "tx_confirmed", "tx_deep"}
	for _, key := range []string{read, write} {
		if kinds, again := activitySince(t, s, key, start); !slices.Equal(kinds, want) || !slices.Equal(again, ids) {
			t.Errorf("read again: %v %v, want %v %v", kinds, again, want, ids)
		}
	}

	// The grant goes: the events are hidden on the next request, from
	// both keys; it comes back: so do they.
	apGrantCard(t, s, acct, cardID, "none")
	for _, key := range []string{read, write} {
		if kinds, _ := activitySince(t, s, key, start); len(kinds) != 0 {
			t.Errorf("right after the grant was removed: %v", kinds)
		}
	}
	apGrantCard(t, s, acct, cardID, "read")
	if kinds, again := activitySince(t, s, read, start); !slices.Equal(again, ids) {
		t.Errorf("with the grant back: %v %v", kinds, again)
	}

	for _, query := range []string{"since=ev1.1", "since=yesterday", "limit=0", "limit=101", "cursor=x"} {
		expect(t, do(t, "GET", s.URL+"/v1/history/activity?"+query, read, nil), http.StatusUnprocessableEntity, "VALIDATION")
	}
}
