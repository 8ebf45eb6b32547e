//go:build unix

package system_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/addrwatch/addrwatch/client"
	"github.com/addrwatch/addrwatch/internal/regtest"
)

// A leader killed (SIGKILL) while a burst of notifications is being
// delivered: one transaction pays forty watched cards of four accounts
// (five webhook channels, slow receivers), a block confirms it, and the
// leader dies when the receivers have heard about half of the burst. The
// new leader carries on: every event each channel was owed (the feed's
// events of its account's cards) arrives at least once, none under an ID
// the feed does not list, no fact (card, transaction, kind) under two
// IDs, each with the card's amount, per card in the feed's order; a try
// the dead leader never got the answer of comes again under the same ID
// (counted); and nothing stays owed in any outbox.
func TestNotificationBurstThroughAKilledLeader(t *testing.T) {
	if testing.Short() {
		t.Skip("needs a btcd regtest node and server processes, which -short leaves out")
	}
	t.Parallel()
	// A chain of its own, so that it runs beside the other tests: the
	// tests on the shared regtest node run one at a time.
	node, err := regtest.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { node.Stop() })
	const (
		accounts  = 4
		cardsEach = 10 // an extended account's Account cards
		// answerAfter keeps each try in flight that long: a channel has
		// at most eight at once, and a card one, so the burst lasts
		// seconds.
		answerAfter = 300 * time.Millisecond
	)
	nodes := startCluster(t, 3, append(btcdChainArgs(t, node), "--notify-key", notifyKeyFile(t, 0x7e), "--notify-allow-private")...)
	leader := leaderOf(t, nodes)

	type owner struct {
		acct account
		read string // an agent's key granted every card
	}
	type hook struct {
		rc         *receiver
		id, secret string
		owner      int
	}
	var owners []owner
	var hooks []hook
	var payments []regtest.Payment
	paid := map[string]int64{} // address → what the payment gives it
	for i := range accounts {
		o := owner{acct: leader.createAccount(t, "extended")}
		o.read = leader.createKey(t, o.acct, "read")
		for j := range cardsEach {
			k, err := node.NewKey(regtest.P2WPKH)
			if err != nil {
				t.Fatal(err)
			}
			card := apOwnerCreateCard(t, leader, o.acct, k.Address, fmt.Sprintf("burst %d.%d", i, j))["id"].(string)
			apGrantCard(t, leader, o.acct, card, "read")
			payments = append(payments, regtest.Payment{Address: k.Address, Sats: 10_000 + 100*int64(len(payments))})
			paid[k.Address] = payments[len(payments)-1].Sats
		}
		// The first account has two channels: each is owed every event.
		channels := 1
		if i == 0 {
			channels = 2
		}
		for c := range channels {
			rc := newSlowReceiver(t, answerAfter, nil)
			id, secret := webhookChannel(t, leader, o.acct, fmt.Sprintf("hook %d", c), rc.URL+"/hook")
			hooks = append(hooks, hook{rc, id, secret, i})
		}
		owners = append(owners, o)
	}
	owedTotal := len(hooks) * cardsEach * 2 // tx_seen and tx_confirmed of each card, to each channel
	heard := func() (n int) {
		for _, h := range hooks {
			n += len(h.rc.requests())
		}
		return n
	}

	// One payment to every card; once the feeds tell it is seen, a block,
	// while the webhooks are still hearing of the mempool.
	txid, err := node.PayAll(payments...)
	if err != nil {
		t.Fatal(err)
	}
	feedsTell := func(s *server, kind string) [][]client.ChainEvent {
		t.Helper()
		feeds := make([][]client.ChainEvent, len(owners))
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			told := 0
			for i, o := range owners {
				feeds[i] = chainFeed(t, s, "/v1", o.read)
				for _, e := range feeds[i] {
					if e.Txid == txid && string(e.Kind) == kind {
						told++
					}
				}
			}
			if told == len(payments) {
				return feeds
			}
			if time.Now().After(deadline) {
				t.Fatalf("the feeds tell %d %s of %d cards; the node's follower said:\n%s", told, kind, len(payments), followerLines(s))
			}
		}
	}
	feedsTell(leader, "tx_seen")
	if _, err := node.Mine(1); err != nil {
		t.Fatal(err)
	}

	// The leader dies halfway through.
	for deadline := time.Now().Add(time.Minute); heard() < owedTotal/2; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the receivers heard %d of %d in a minute; the leader said:\n%s", heard(), owedTotal, leader.logs.String())
		}
	}
	leader.kill()
	killed := time.Now()
	heardBefore := make([]int, len(hooks))
	for i, h := range hooks {
		heardBefore[i] = len(h.rc.requests())
	}
	if n := heard(); n >= owedTotal {
		t.Fatalf("the burst was over before the leader died (%d requests of %d owed): no test of a kill mid-burst", n, owedTotal)
	}
	next := nextLeader(t, nodes, leader)
	feeds := feedsTell(next, "tx_confirmed")

	// Every channel: all it was owed, at least once, each fact under one
	// ID, per card in the feed's order.
	var requests, duplicates, afterKill, firstAfterKill int
	for i, h := range hooks {
		owed := feeds[h.owner]
		what := fmt.Sprintf("webhook %s of account %d", h.id, h.owner)
		got := h.rc.waitRequests(t, next, what+": every event owed", 2*time.Minute, hasEvery(eventIDs(owed)))
		n := checkDelivered(t, what, got, h.secret, owed)
		requests, duplicates, afterKill = requests+n.requests, duplicates+n.duplicates, afterKill+len(got)-heardBefore[i]
		factIDs := map[string]string{}
		came := map[string]bool{}
		for j, r := range got {
			fact := r.event.CardID + " " + r.event.TxID + " " + r.event.Type
			if id, seen := factIDs[fact]; seen && id != r.event.ID {
				t.Errorf("%s: %s came under two IDs, %s and %s", what, fact, id, r.event.ID)
			}
			factIDs[fact] = r.event.ID
			if r.event.AmountSat != paid[r.event.Address] {
				t.Errorf("%s: %s %s of %s: %d sat, the payment gave it %d", what, r.event.Type, r.event.ID, r.event.Address, r.event.AmountSat, paid[r.event.Address])
			}
			if !came[r.event.ID] && j >= heardBefore[i] {
				firstAfterKill++
			}
			came[r.event.ID] = true
		}
		if len(owed) != 2*cardsEach || len(factIDs) != len(owed) {
			t.Errorf("%s: the feed lists %d events and %d facts came, want %d of each: %v", what, len(owed), len(factIDs), 2*cardsEach, kindsAndIDs(owed))
		}
	}
	// For the closing note: the counts, and how long the new leader took.
	t.Logf("burst: %d events owed over %d channels (%d cards, tx_seen and tx_confirmed each); %d requests before the kill, %d after (%d events first heard after it); %d requests in all, %d of them again under the same ID; all heard %s after the kill",
		owedTotal, len(hooks), len(payments), requests-afterKill, afterKill, firstAfterKill, requests, duplicates, time.Since(killed).Round(time.Millisecond))
	if firstAfterKill == 0 {
		t.Error("the new leader delivered no event first: the burst was over at the kill")
	}

	// Nothing stays owed: each acknowledgement went through the log.
	for i, o := range owners {
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
			r := do(t, "GET", ntURL(next, "/outbox"), o.acct.OwnerSecret, nil)
			expect(t, r, http.StatusOK, "")
			var outbox struct{ Channels []struct{ Pending int } }
			if err := json.Unmarshal(r.Body, &outbox); err != nil {
				t.Fatal(err)
			}
			if !slices.ContainsFunc(outbox.Channels, func(c struct{ Pending int }) bool { return c.Pending > 0 }) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("account %d's outbox still owes: %s\nthe node said:\n%s", i, r.Body, next.logs.String())
			}
		}
	}
}
