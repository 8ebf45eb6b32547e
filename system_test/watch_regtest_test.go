//go:build unix

package system_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/addrwatch/addrwatch/chain/electrum/electrumtest"
	"github.com/addrwatch/addrwatch/internal/regtest"
)

// watchedTx is one transaction of GET /owner/v1/watched.
type watchedTx struct {
	TxID        string `json:"txid"`
	State       string `json:"state"`
	Height      int64  `json:"height"`
	BlockHash   string `json:"block_hash"`
	ReceivedSat int64  `json:"received_sat"`
	ReplacedBy  string `json:"replaced_by"`
	FirstSeenAt string `json:"first_seen_at"`
}

// watchedTxs is what the account recorded of address's transactions, by
// txid, as any serving node answers it.
func watchedTxs(t *testing.T, s *server, a account, address string) map[string]watchedTx {
	t.Helper()
	r := do(t, "GET", s.URL+"/owner/v1/watched", a.OwnerSecret, nil)
	expect(t, r, http.StatusOK, "")
	var v struct {
		Addresses []struct {
			Address      string
			Transactions []watchedTx
		}
	}
	if err := json.Unmarshal(r.Body, &v); err != nil {
		t.Fatalf("GET /owner/v1/watched: %v\n%s", err, r.Body)
	}
	out := map[string]watchedTx{}
	for _, w := range v.Addresses {
		if w.Address != address {
			continue
		}
		for _, tx := range w.Transactions {
			if _, twice := out[tx.TxID]; twice {
				t.Fatalf("%s is recorded twice: %s", tx.TxID, r.Body)
			}
			out[tx.TxID] = tx
		}
	}
	return out
}

// waitRecorded waits until the account's record of address holds txid
// in state (and, when block is set, in that block).
func waitRecorded(t *testing.T, s *server, a account, address, txid, state, block string) watchedTx {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		tx, found := watchedTxs(t, s, a, address)[txid]
		if found && tx.State == state && (block == "" || tx.BlockHash == block) {
			return tx
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never became %s %s at %s; it is %+v (found %v); the node's follower said:\n%s", txid, state, block, address, tx, found, followerLines(s))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// A three-node cluster follows a btcd regtest chain: a payment to a
// watched address is seen in the mempool, then confirmed in its block;
// with the leader killed, the new leader carries on from the record
// (nothing recorded twice, first sightings kept); a payment replaced by
// a higher fee is recorded as replaced by its replacement; a block that
// leaves the chain takes its payment out, and the payment confirmed again
// in the longer branch is recorded there; and the balance the agents read
// is the chain's.
//
// Each of these is told (notifyThroughTheCluster): the owner's webhook
// gets every chain event signed, per card in order, the leader's kill
// notwithstanding; the agents' feed read through a follower lists the
// same events, of the cards the key can read only; and a node given
// another notify key signs nothing.
func TestWatchingARegtestChainThroughACluster(t *testing.T) {
	t.Parallel()
	node := regtest.Own(t) // it mines and reorgs: a chain no other test sees
	// Every node has the same notify key, as the README says it must.
	notifyKey := notifyKeyFile(t, 0x5a)
	nodes := startCluster(t, 3, append(btcdChainArgs(t, node), "--notify-key", notifyKey, "--notify-allow-private")...)
	t.Cleanup(func() {
		if t.Failed() { // what the nodes could not name to a client
			for i, s := range nodes {
				for _, l := range strings.Split(s.logs.String(), "\n") {
					if strings.Contains(l, "level=WARN") || strings.Contains(l, "level=ERROR") && !strings.Contains(l, "@module=raft") {
						t.Logf("n%d: %s", i+1, l)
					}
				}
			}
		}
	})
	leader := leaderOf(t, nodes)
	acct := leader.createAccount(t, "extended")
	hook := newReceiver(t, nil)
	hookID, hookSecret := webhookChannel(t, leader, acct, "hook", hook.URL+"/hook")
	payee, err := node.NewKey(regtest.P2WPKH)
	if err != nil {
		t.Fatal(err)
	}
	payer, err := node.NewKey(regtest.P2PKH)
	if err != nil {
		t.Fatal(err)
	}
	cardID := apOwnerCreateCard(t, leader, acct, payee.Address, "payee")["id"].(string)
	payerCardID := apOwnerCreateCard(t, leader, acct, payer.Address, "payer")["id"].(string)

	// Seen, then confirmed.
	first, err := node.Pay(payee.Address, 50_000)
	if err != nil {
		t.Fatal(err)
	}
	seen := waitRecorded(t, leader, acct, payee.Address, first, "mempool", "")
	blocks, err := node.Mine(1)
	if err != nil {
		t.Fatal(err)
	}
	waitRecorded(t, leader, acct, payee.Address, first, "confirmed", blocks[0])

	// The leader dies; the next one carries on from the record.
	dead := leader
	leader.kill()
	var rest []*server
	for _, s := range nodes {
		if s != leader {
			rest = append(rest, s)
		}
	}
	leader = nextLeader(t, nodes, leader)
	funded, err := payer.Fund(200_000)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := node.Mine(1); err != nil {
		t.Fatal(err)
	}
	sent, err := payer.Send(payee.Address, 30_000, 500)
	if err != nil {
		t.Fatal(err)
	}
	waitRecorded(t, leader, acct, payee.Address, sent, "mempool", "")
	if again := watchedTxs(t, leader, acct, payee.Address)[first]; again.FirstSeenAt != seen.FirstSeenAt {
		t.Errorf("the new leader saw %s anew: first seen %s, then %s", first, seen.FirstSeenAt, again.FirstSeenAt)
	}

	// Replaced by a higher fee.
	bumped, err := payer.Replace(sent, 3_000)
	if err != nil {
		t.Fatal(err)
	}
	if replaced := waitRecorded(t, leader, acct, payee.Address, sent, "replaced", ""); replaced.ReplacedBy != bumped {
		t.Errorf("%s replaced by %q, want %s", sent, replaced.ReplacedBy, bumped)
	}
	waitRecorded(t, leader, acct, payee.Address, bumped, "mempool", "")
	blocks, err = node.Mine(1)
	if err != nil {
		t.Fatal(err)
	}
	waitRecorded(t, leader, acct, payee.Address, bumped, "confirmed", blocks[0])

	// Reorged out, then confirmed again on the longer branch.
	if _, err := node.Reorg(1); err != nil {
		t.Fatal(err)
	}
	waitRecorded(t, leader, acct, payee.Address, bumped, "reorged", blocks[0])
	again, err := node.Mine(1)
	if err != nil {
		t.Fatal(err)
	}
	waitRecorded(t, leader, acct, payee.Address, bumped, "confirmed", again[0])

	// The agents read the chain's balance, from any node.
	read := leader.createKey(t, acct, "read")
	apGrantCard(t, leader, acct, cardID, "read")
	for _, s := range rest {
		v, _ := hbGet(t, s, "/v1", read)
		if len(v.Cards) != 1 || v.Cards[0].Balance.ConfirmedSat == nil || *v.Cards[0].Balance.ConfirmedSat != 50_000+30_000 {
			t.Errorf("%s: the payee's balance %s, want 80000 confirmed", s.URL, hbJSON(v.Cards))
		}
	}

	notifyThroughTheCluster(t, clusterNotifications{
		nodes: nodes, leader: leader, rest: rest, dead: dead, acct: acct, read: read,
		hook: hook, hookID: hookID, hookSecret: hookSecret,
		payee: cardID, payer: payerCardID,
		txs:         map[string]string{first: "first", funded: "funded", sent: "sent", bumped: "bumped"},
		confirmedIn: blocks[0], reconfirmedIn: again[0],
	})
}

// nextLeader waits until the nodes but dead agree on a leader other than
// dead, and returns it.
func nextLeader(t *testing.T, nodes []*server, dead *server) *server {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		for _, s := range nodes {
			if s == dead {
				continue
			}
			id := statusOf(t, s).Leader
			for i, n := range nodes {
				if id == fmt.Sprintf("n%d", i+1) && n != dead && isReady(n) {
					return n
				}
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no new leader after the leader was killed")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// isReady reports whether s answers its /readyz with 200 (it knows a
// serving leader).
func isReady(s *server) bool {
	resp, err := http.Get(s.AdminURL + "/readyz")
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// followerLines are the node's log lines of the chain follower.
func followerLines(s *server) string {
	var out []string
	for _, line := range strings.Split(s.logs.String(), "\n") {
		if strings.Contains(line, "follower") || strings.Contains(line, "version") || strings.Contains(line, "level=ERROR") {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}

// A node reading the owner's Electrum server (here one that serves the
// btcd regtest chain as electrs would) is told of changes by it (Electrum
// subscriptions, chain.Notifier): a payment to a watched address is
// recorded in the mempool and then confirmed in its block.
func TestWatchingThroughAnElectrumServer(t *testing.T) {
	t.Parallel()
	node := regtest.Own(t) // it mines and reorgs: a chain no other test sees
	srv, err := electrumtest.Start(electrumtest.Config{RPC: node.Client()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	s := startServer(t, "--network", "regtest", "--chain", "electrum:"+srv.Addr(), "--chain-poll", "200ms")
	acct := s.createAccount(t, "extended")
	payee, err := node.NewKey(regtest.P2WPKH)
	if err != nil {
		t.Fatal(err)
	}
	apOwnerCreateCard(t, s, acct, payee.Address, "payee")
	txid, err := node.Pay(payee.Address, 40_000)
	if err != nil {
		t.Fatal(err)
	}
	waitRecorded(t, s, acct, payee.Address, txid, "mempool", "")
	blocks, err := node.Mine(1)
	if err != nil {
		t.Fatal(err)
	}
	waitRecorded(t, s, acct, payee.Address, txid, "confirmed", blocks[0])
}
