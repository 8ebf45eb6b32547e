//go:build unix

package system_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/addrwatch/addrwatch/client"
	"github.com/addrwatch/addrwatch/notify/send"
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
	// not hold, and holds the notification back as a setup problem of
	// its own: "send again" of first's tx_seen is neither sent nor
	// recorded (no attempt spent, no line in the log, nothing against the
	// channel's health), "send a test" answers key_mismatch, and the
	// node's status says why it holds tries back. Once a node with the
	// cluster's key leads again, it delivers the notification.
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
		t.Fatalf("no delivered line of first's %s to the webhook in the log: %v", owed[0].Kind, lines)
	}
	expect(t, do(t, "POST", ntURL(c.dead, "/deliveries/"+entry+"/redeliver"), c.acct.OwnerSecret, nil), http.StatusAccepted, "")
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		r := do(t, "GET", c.dead.AdminURL+"/admin/v1/cluster", c.dead.AdminToken, nil)
		stats, _ := r.JSON(t)["deliverer"].(map[string]any)
		if held, _ := stats["held_back"].(float64); held >= 1 && strings.HasPrefix(fmt.Sprint(stats["last_error"]), "key_mismatch") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("send again on a leader with another key: not held back: %s\nthe node said:\n%s", r.Body, c.dead.logs.String())
		}
	}
	if !strings.Contains(c.dead.logs.String(), "notifications held back") {
		t.Errorf("the node with another key did not tell its operator why it holds notifications back:\n%s", c.dead.logs.String())
	}
	after, body := deliveryLog(t, c.dead, c.acct)
	if len(after) != len(lines) || strings.Contains(string(body), "key_mismatch") {
		t.Errorf("a try held back for the node's own key was recorded: %s", body)
	}
	r := do(t, "POST", ntURL(c.dead, "/channels/"+c.hookID+"/test"), c.acct.OwnerSecret, nil)
	expect(t, r, http.StatusOK, "")
	if v := r.JSON(t); v["delivered"] != false || v["class"] != "key_mismatch" {
		t.Errorf("a test from a leader with another key: %s", r.Body)
	}
	if after := c.hook.requests(); len(after) != heard {
		t.Errorf("a leader with another key reached the webhook: %s", describe(after[heard:]))
	}
	transferLeadership(t, c.dead, c.nodes, c.leader)
	again := c.hook.waitRequests(t, c.leader, "the notification held back, once a node with the cluster's key leads", 30*time.Second,
		func(got []hookRequest) bool { return len(got) > heard })
	if e := again[heard]; e.event.ID != owed[0].Id || e.header.Get(send.DeliveryAttemptHeader) != "2" {
		t.Errorf("delivered after the key problem as %s attempt %s, want %s attempt 2 (the held-back tries spent none)", e.event.ID, e.header.Get(send.DeliveryAttemptHeader), owed[0].Id)
	}
	if err := send.Verify(c.hookSecret, again[heard].header.Get(send.SignatureHeader), again[heard].body, time.Now(), 0); err != nil {
		t.Errorf("the notification delivered after the key problem: %v", err)
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
