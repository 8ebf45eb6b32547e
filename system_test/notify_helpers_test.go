//go:build unix

package system_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/addrwatch/addrwatch/client"
	"github.com/addrwatch/addrwatch/internal/regtest"
	"github.com/addrwatch/addrwatch/notify/send"
)

// Helpers of the notification tests through a cluster (watch_regtest_test.go
// and notify_burst_test.go): the cluster's notify key, the flags that make
// a node follow a btcd regtest chain, webhook channels, the chain feed
// read whole, and the check of what a webhook got against it.

// notifyKeyFile writes a notify key (64 hex digits: b's two, 32 times) to
// a file only its owner may read, as every node of a cluster is given.
func notifyKeyFile(t *testing.T, b byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "notify-key")
	if err := os.WriteFile(path, []byte(strings.Repeat(fmt.Sprintf("%02x", b), 32)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// btcdChainArgs are the flags that make a node follow node's chain over
// its RPC (the certificate in a file of the test's), polling every 200 ms.
func btcdChainArgs(t *testing.T, node *regtest.Node) []string {
	t.Helper()
	rpc := node.RPC()
	cert := filepath.Join(t.TempDir(), "rpc.cert")
	if err := os.WriteFile(cert, rpc.Cert, 0o600); err != nil {
		t.Fatal(err)
	}
	return []string{"--network", "regtest", "--chain", "btcd:" + rpc.URL().String(), "--chain-cert", cert, "--chain-poll", "200ms"}
}

// webhookChannel makes a webhook channel of a's to url and returns its ID
// and its secret, which only this answer shows.
func webhookChannel(t *testing.T, s *server, a account, name, url string) (id, secret string) {
	t.Helper()
	r := do(t, "POST", ntURL(s, "/channels"), a.OwnerSecret, map[string]any{"kind": "webhook", "name": name, "url": url})
	expect(t, r, http.StatusCreated, "")
	v := r.JSON(t)
	return owString(t, owObject(t, v, "channel"), "id"), owString(t, v, "secret")
}

// chainFeed is every chain event of the past day that bearer reads through
// s, page after page: api is "/v1" for an agent's key, "/owner/v1" for the
// owner (every card).
func chainFeed(t *testing.T, s *server, api, bearer string) []client.ChainEvent {
	t.Helper()
	var all []client.ChainEvent
	query := "?limit=100"
	for range 100 {
		r := do(t, "GET", s.URL+api+"/history/activity"+query, bearer, nil)
		expect(t, r, http.StatusOK, "")
		var page client.ChainActivity
		if err := json.Unmarshal(r.Body, &page); err != nil {
			t.Fatalf("GET %s/history/activity: %v\n%s", api, err, r.Body)
		}
		all = append(all, page.Events...)
		if !page.HasMore || len(page.Events) == 0 {
			return all
		}
		query = "?limit=100&since=" + url.QueryEscape(page.NextSince)
	}
	t.Fatalf("%s/history/activity still has more after 100 pages", api)
	return nil
}

// eventIDs are the events' IDs, in their order.
func eventIDs(events []client.ChainEvent) []string {
	ids := make([]string, len(events))
	for i, e := range events {
		ids[i] = e.Id
	}
	return ids
}

// hasEvery is a waitRequests condition: a request of each of ids came.
func hasEvery(ids []string) func([]hookRequest) bool {
	return func(got []hookRequest) bool {
		came := map[string]bool{}
		for _, r := range got {
			came[r.event.ID] = true
		}
		for _, id := range ids {
			if !came[id] {
				return false
			}
		}
		return true
	}
}

// delivered counts what one webhook channel's receiver got.
type delivered struct {
	requests   int // every request
	duplicates int // requests of an ID that came before: redeliveries
}

// checkDelivered checks what a webhook channel's receiver got against the
// chain events it was owed (owed: the feed's events of the cards the
// channel is told of, in the feed's order). Every request is signed with
// the channel's secret and is no test; every ID is one the feed lists,
// with the feed's card, transaction, kind and amount; an ID that comes
// again (a redelivery) has the same body; and for each card the first
// arrivals of its events are the feed's events of the card, in the
// feed's order: none missing, none extra, none early. It returns the
// counts.
func checkDelivered(t *testing.T, what string, got []hookRequest, secret string, owed []client.ChainEvent) delivered {
	t.Helper()
	failed := false
	errorf := func(format string, args ...any) {
		t.Helper()
		failed = true
		t.Errorf(what+": "+format, args...)
	}
	byID := map[string]client.ChainEvent{}
	feedOrder := map[string][]string{} // card → its events' IDs, in the feed's order
	for _, e := range owed {
		if _, twice := byID[e.Id]; twice {
			errorf("the feed lists %s twice", e.Id)
		}
		byID[e.Id] = e
		feedOrder[e.CardId] = append(feedOrder[e.CardId], e.Id)
	}
	firstBody := map[string][]byte{}
	arrivals := map[string][]string{} // card → its events' IDs, in the order they first came
	var n delivered
	for _, req := range got {
		n.requests++
		id := req.event.ID
		if err := send.Verify(secret, req.header.Get(send.SignatureHeader), req.body, time.Now(), 0); err != nil {
			errorf("%s %s: the signature: %v", req.event.Type, id, err)
		}
		e, listed := byID[id]
		if !listed {
			errorf("%s %s came, which the feed does not list: %s", req.event.Type, id, req.body)
			continue
		}
		if req.header.Get(send.EventIDHeader) != id || req.event.Test || req.event.CardID != e.CardId || req.event.TxID != e.Txid ||
			req.event.Type != string(e.Kind) || req.event.AmountSat != int64(e.AmountSat) {
			errorf("%s is not the feed's %s of %s on %s (%d sat): %v %s", id, e.Kind, e.Txid, e.CardId, e.AmountSat, req.header, req.body)
		}
		if body, again := firstBody[id]; again {
			n.duplicates++
			if !bytes.Equal(body, req.body) {
				errorf("%s came again with another body: %s, then %s", id, body, req.body)
			}
			continue
		}
		firstBody[id] = req.body
		arrivals[e.CardId] = append(arrivals[e.CardId], id)
	}
	for card, ids := range feedOrder {
		if !slices.Equal(arrivals[card], ids) {
			errorf("the events of %s first came as %v; the feed lists %v", card, arrivals[card], ids)
		}
	}
	if failed {
		t.Logf("%s: every request, in order: %s", what, describe(got))
	}
	return n
}

// transferLeadership makes to the leader of nodes (through the admin API
// of via) and waits until the others agree and it serves.
func transferLeadership(t *testing.T, via *server, nodes []*server, to *server) {
	t.Helper()
	id := ""
	for i, s := range nodes {
		if s == to {
			id = fmt.Sprintf("n%d", i+1)
		}
	}
	// A node just restarted may not have caught up in time for raft: the
	// API says so with a 503 to ask again, and the operator does.
	r := do(t, "POST", via.AdminURL+"/admin/v1/cluster/transfer", via.AdminToken, map[string]any{"id": id})
	for deadline := time.Now().Add(20 * time.Second); r.Status == http.StatusServiceUnavailable && strings.Contains(string(r.Body), "transfer did not complete") && time.Now().Before(deadline); {
		time.Sleep(time.Second)
		r = do(t, "POST", via.AdminURL+"/admin/v1/cluster/transfer", via.AdminToken, map[string]any{"id": id})
	}
	expect(t, r, http.StatusOK, "")
	deadline := time.Now().Add(20 * time.Second)
	for statusOf(t, via).Leader != id || !isReady(to) {
		if time.Now().After(deadline) {
			t.Fatalf("%s does not lead after the transfer: %s leads; it said:\n%s", id, statusOf(t, via).Leader, to.logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// withFlag is args with flag's value set to value (added when absent).
func withFlag(args []string, flag, value string) []string {
	out := slices.Clone(args)
	if i := slices.Index(out, flag); i >= 0 && i+1 < len(out) {
		out[i+1] = value
		return out
	}
	return append(out, flag, value)
}

// deliveryLine is one line of the delivery log.
type deliveryLine struct {
	ChannelID string `json:"channel_id"`
	EntryID   string `json:"entry_id"`
	EventID   string `json:"event_id"`
	Kind      string `json:"kind"`
	Attempt   int    `json:"attempt"`
	Delivered bool   `json:"delivered"`
	Status    int    `json:"status"`
	Class     string `json:"class"`
}

// deliveryLog is a's delivery log (its 200 newest lines, newest first)
// as s serves it, and the answer's body.
func deliveryLog(t *testing.T, s *server, a account) ([]deliveryLine, []byte) {
	t.Helper()
	r := do(t, "GET", ntURL(s, "/deliveries?limit=200"), a.OwnerSecret, nil)
	expect(t, r, http.StatusOK, "")
	var log struct{ Deliveries []deliveryLine }
	if err := json.Unmarshal(r.Body, &log); err != nil {
		t.Fatalf("GET /owner/v1/notifications/deliveries: %v\n%s", err, r.Body)
	}
	return log.Deliveries, r.Body
}
