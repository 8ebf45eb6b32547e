//go:build unix

package system_test

import (
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/addrwatch/addrwatch/client"
)

// clusterNotifications is what TestWatchingARegtestChainThroughACluster
// did, for notifyThroughTheCluster to check what was told of it.
type clusterNotifications struct {
	nodes  []*server
	leader *server   // the leader at the end
	rest   []*server // the nodes but dead
	dead   *server   // the first leader, killed after first's block
	acct   account
	read   string // an agent's key granted the payee's card and no other
	// hook is the account's webhook, made before any payment.
	hook               *receiver
	hookID, hookSecret string
	payee, payer       string            // the two cards
	txs                map[string]string // txid → its name: first, funded, sent, bumped
	// confirmedIn is the block that confirmed bumped and was reorged out;
	// reconfirmedIn, the one of the longer branch.
	confirmedIn, reconfirmedIn string
}

// notifyThroughTheCluster checks what the owner and the agents were told
// of c (issue 32's test through a three-node cluster on a btcd regtest
// chain).
func notifyThroughTheCluster(t *testing.T, c clusterNotifications) {
	t.Helper()
	// The owner's webhook: every chain event the account recorded,
	// signed, per card in order, each redelivery under its event's ID;
	// the leader's kill after first's block lost none.
	owed := chainFeed(t, c.leader, "/owner/v1", c.acct.OwnerSecret)
	got := c.hook.waitRequests(t, c.leader, "every chain event at the webhook", time.Minute, hasEvery(eventIDs(owed)))
	n := checkDelivered(t, "the webhook", got, c.hookSecret, owed)
	t.Logf("the webhook got %d requests for %d chain events: %d of them again, under the same ID", n.requests, len(owed), n.duplicates)

	// The facts, per card in order, each with the card's net change.
	told := map[string][]string{}
	for _, e := range owed {
		told[e.CardId] = append(told[e.CardId], fmt.Sprintf("%s %s %d", e.Kind, c.txs[e.Txid], e.AmountSat))
	}
	wantPayee := []string{"tx_seen first 50000", "tx_confirmed first 50000",
		"tx_seen sent 30000", "tx_replaced sent 30000",
		"tx_seen bumped 30000", "tx_confirmed bumped 30000", "tx_reorged bumped 30000", "tx_confirmed bumped 30000"}
	// The payer's coin was mined right after it was paid: the follower
	// may have seen it in the mempool first, or not. Its payment cost it
	// the amount and the fee: 500, then 3,000 in the replacement.
	wantPayer := []string{"tx_confirmed funded 200000",
		"tx_seen sent -30500", "tx_replaced sent -30500",
		"tx_seen bumped -33000", "tx_confirmed bumped -33000", "tx_reorged bumped -33000", "tx_confirmed bumped -33000"}
	payerTold := slices.DeleteFunc(slices.Clone(told[c.payer]), func(s string) bool { return s == "tx_seen funded 200000" })
	if !slices.Equal(told[c.payee], wantPayee) || !slices.Equal(payerTold, wantPayer) || len(told) != 2 {
		t.Errorf("the chain events:\npayee %q\nwant  %q\npayer %q\nwant  %q (and maybe the funding's tx_seen first)\nof %d cards", told[c.payee], wantPayee, told[c.payer], wantPayer, len(told))
	}
	// A reorg undoes a confirmation (tx_reorged names the block that
	// left), and the confirmation in the longer branch is a new fact
	// under a new ID.
	var bumpedBlocks, bumpedIDs []string
	for _, e := range owed {
		if e.CardId == c.payee && c.txs[e.Txid] == "bumped" && e.Kind != "tx_seen" && e.BlockHash != nil {
			bumpedBlocks, bumpedIDs = append(bumpedBlocks, string(e.Kind)+" "+*e.BlockHash), append(bumpedIDs, e.Id)
		}
	}
	wantBlocks := []string{"tx_confirmed " + c.confirmedIn, "tx_reorged " + c.confirmedIn, "tx_confirmed " + c.reconfirmedIn}
	if !slices.Equal(bumpedBlocks, wantBlocks) || len(bumpedIDs) != 3 || bumpedIDs[0] == bumpedIDs[2] {
		t.Errorf("the replacement's events: %v under IDs %v; want %v, the two confirmations under two IDs", bumpedBlocks, bumpedIDs, wantBlocks)
	}

	// The agents' feed read through a follower: what the webhook first
	// got of the payee's card, the key's only card; nothing of the payer's.
	var follower *server
	for _, s := range c.rest {
		if s != c.leader {
			follower = s
		}
	}
	webhookGot := firstArrivals(got, c.payee)
	if feed := kindsAndIDs(chainFeed(t, follower, "/v1", c.read)); !slices.Equal(feed, webhookGot) {
		t.Errorf("the agents' feed through a follower lists %v; the webhook got %v of the payee's card", feed, webhookGot)
	}
	// A grant removed hides the card's events on the very next request,
	// from every node; given back, it shows them again.
	apGrantCard(t, follower, c.acct, c.payee, "none")
	for _, s := range c.rest {
		if feed := chainFeed(t, s, "/v1", c.read); len(feed) != 0 {
			t.Errorf("%s: right after the grant was removed the feed lists %v", s.URL, kindsAndIDs(feed))
		}
	}
	apGrantCard(t, c.leader, c.acct, c.payee, "read")
	for _, s := range c.rest {
		if feed := kindsAndIDs(chainFeed(t, s, "/v1", c.read)); !slices.Equal(feed, webhookGot) {
			t.Errorf("%s: with the grant back the feed lists %v, want %v", s.URL, feed, webhookGot)
		}
	}

	// A node given another notify key than the cluster's (restarted
	// so), made leader, refuses to sign with a secret the receiver does
	// not hold: "send again" of first's tx_seen is tried and logged as
	// key_mismatch, "send a test" answers it, and the webhook hears
	// nothing from the node.
	c.dead.start(withFlag(c.dead.extra, "--notify-key", notifyKeyFile(t, 0xc3))...)
	transferLeadership(t, c.leader, c.nodes, c.dead)
	heard := len(c.hook.requests())
	var entry string
	lines, _ := deliveryLog(t, c.dead, c.acct)
	for _, l := range lines {
		if l.ChannelID == c.hookID && l.EventID == owed[0].Id && l.Delivered {
			entry = l.EntryID
		}
	}
	if entry == "" || c.txs[owed[0].Txid] != "first" {
		t.Fatalf("no delivered line of first's tx_seen (%s) in the log: %+v", owed[0].Id, lines)
	}
	expect(t, do(t, "POST", ntURL(c.dead, "/deliveries/"+entry+"/redeliver"), c.acct.OwnerSecret, nil), http.StatusAccepted, "")
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		lines, body := deliveryLog(t, c.dead, c.acct)
		if len(lines) > 0 && lines[0].EntryID == entry && lines[0].Class == "key_mismatch" && !lines[0].Delivered {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("send again on a leader with another key: no key_mismatch line in the log: %s\nthe node said:\n%s", body, c.dead.logs.String())
		}
	}
	r := do(t, "POST", ntURL(c.dead, "/channels/"+c.hookID+"/test"), c.acct.OwnerSecret, nil)
	expect(t, r, http.StatusOK, "")
	if v := r.JSON(t); v["delivered"] != false || v["class"] != "key_mismatch" {
		t.Errorf("a test from a leader with another key: %s", r.Body)
	}
	if after := c.hook.requests(); len(after) != heard {
		t.Errorf("a leader with another key reached the webhook: %s", describe(after[heard:]))
	}
}

// firstArrivals are the kinds and IDs of card's events as they first
// came to a receiver, in that order.
func firstArrivals(got []hookRequest, card string) []string {
	var out []string
	came := map[string]bool{}
	for _, r := range got {
		if r.event.CardID == card && !came[r.event.ID] {
			came[r.event.ID] = true
			out = append(out, r.event.Type+" "+r.event.ID)
		}
	}
	return out
}

// kindsAndIDs are the events' kinds and IDs, in their order.
func kindsAndIDs(events []client.ChainEvent) []string {
	out := make([]string, len(events))
	for i, e := range events {
		out[i] = string(e.Kind) + " " + e.Id
	}
	return out
}
