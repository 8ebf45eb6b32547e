package actors

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

const (
	token1 = "tok-0123456789abcdef"
	token2 = "tok-fedcba9876543210"
)

func createReq(token, body string) *IdempotencyRequest {
	return &IdempotencyRequest{Token: token, Method: "POST", Path: "/v1/portfolio/cards", BodyHash: hashOf(body)}
}

// idem applies payload with an Idempotency-Key request attached.
func (ta *testAccount) idem(p Principal, req *IdempotencyRequest, payload Payload) Result {
	ta.t.Helper()
	c := ta.cmd(p, payload)
	r := *req
	c.Idempotency = &r
	return ta.run(c)
}

func TestValidateIdempotencyToken(t *testing.T) {
	good := []string{
		strings.Repeat("a", 16),
		strings.Repeat("Z", 128),
		"ABCxyz0189._~-abc",
		"0123456789012345",
		"----------------",
	}
	for _, tok := range good {
		if err := ValidateIdempotencyToken(tok); err != nil {
			t.Fatalf("token %q (%d chars) rejected: %v", tok, len(tok), err)
		}
	}
	bad := []string{
		"",
		strings.Repeat("a", 15),
		strings.Repeat("a", 129),
		"has space 0123456",
		"slash/0123456789ab",
		"plus+0123456789abc",
		"equals=0123456789a",
		"colon:0123456789ab",
		"newline\n0123456789",
		"unicodeé0123456789",
		strings.Repeat("é", 16), // 16 characters, but not allowed ones
	}
	for _, tok := range bad {
		err := ValidateIdempotencyToken(tok)
		if err == nil {
			t.Fatalf("token %q accepted", tok)
		}
		if ErrorCode(err) != CodeValidation {
			t.Fatalf("token %q: %v, want VALIDATION", tok, err)
		}
		if len(tok) > 0 {
			mustNotMention(t, "token error", err.Error(), tok)
		}
	}
}

func TestIdempotentReplayReturnsThePriorResult(t *testing.T) {
	ta := newTestAccount(t, PlanBase)
	w := ta.addKey(LevelWrite)
	req := createReq(token1, `{"address":"`+addrs[0]+`"}`)
	first := ta.idem(w, req, &CreatePortfolioCard{CardID: "card-1", Address: addrs[0], CardFields: CardFields{Name: ptr("n")}})
	if first.Err != nil || first.Status != 201 {
		t.Fatalf("first create %+v", first)
	}
	afterFirst := ta.snapshot()
	seq, events := ta.a.Seq, len(ta.a.Audit)

	// The retry carries a fresh card id (the edge makes one per request),
	// yet no second card is made and the first card comes back.
	for i := range 3 {
		again := ta.idem(w, req, &CreatePortfolioCard{CardID: fmt.Sprintf("card-retry-%d", i), Address: addrs[0], CardFields: CardFields{Name: ptr("n")}})
		if again.Err != nil {
			t.Fatalf("replay %d: %v", i, again.Err)
		}
		if again.Status != first.Status || bodyJSON(t, again.Body) != bodyJSON(t, first.Body) {
			t.Fatalf("replay %d gave %d %s, first was %d %s", i, again.Status, bodyJSON(t, again.Body), first.Status, bodyJSON(t, first.Body))
		}
		if cardOf(t, again).ID != "card-1" {
			t.Fatalf("replay names card %s", cardOf(t, again).ID)
		}
	}
	if len(ta.a.Portfolio) != 1 || ta.a.Seq != seq || len(ta.a.Audit) != events {
		t.Fatalf("replays changed the account: %d cards, seq %d→%d, events %d→%d", len(ta.a.Portfolio), seq, ta.a.Seq, events, len(ta.a.Audit))
	}
	if !bytes.Equal(afterFirst, ta.snapshot()) {
		t.Fatalf("a replay changed the stored state")
	}
	// Without the header a retry is a new request and meets the duplicate.
	ta.mustFail(CodeDuplicateAddress, w, &CreatePortfolioCard{CardID: "card-2", Address: addrs[0]})
}

func TestIdempotentReplayOfADelete(t *testing.T) {
	ta := newTestAccount(t, PlanBase)
	w := ta.addKey(LevelWrite)
	card := ta.createCard(w, addrs[0])
	req := &IdempotencyRequest{Token: token1, Method: "DELETE", Path: "/v1/portfolio/cards/" + card.ID, BodyHash: hashOf(`{"expected_version":"` + card.Version + `"}`)}
	del := &DeletePortfolioCard{CardID: card.ID, ExpectedVersion: card.Version}
	first := ta.idem(w, req, del)
	if first.Err != nil {
		t.Fatal(first.Err)
	}
	// Without the token the retry would be NOT_FOUND; with it, the
	// prior result comes back.
	again := ta.idem(w, req, del)
	if again.Err != nil || again.Status != 200 || bodyJSON(t, again.Body) != `{"deleted":true}` {
		t.Fatalf("delete replay %+v", again)
	}
	ta.mustFail(CodeNotFound, w, del)
}

func TestIdempotencyConflictOnADifferentRequest(t *testing.T) {
	ta := newTestAccount(t, PlanBase)
	w := ta.addKey(LevelWrite)
	req := createReq(token1, "body-1")
	if res := ta.idem(w, req, &CreatePortfolioCard{CardID: "card-1", Address: addrs[0]}); res.Err != nil {
		t.Fatal(res.Err)
	}
	before := ta.snapshot()
	variants := map[string]*IdempotencyRequest{
		"body":   createReq(token1, "body-2"),
		"path":   {Token: token1, Method: "POST", Path: "/v1/bookmark-spaces", BodyHash: hashOf("body-1")},
		"method": {Token: token1, Method: "DELETE", Path: "/v1/portfolio/cards", BodyHash: hashOf("body-1")},
	}
	for name, v := range variants {
		res := ta.idem(w, v, &CreatePortfolioCard{CardID: "card-2", Address: addrs[1]})
		err := wantCode(t, res, CodeIdempotencyConflict)
		mustNotMention(t, name+" conflict", err.Message, "card-1", addrs[0])
		if res.Body != nil {
			t.Fatalf("%s conflict carries a body", name)
		}
	}
	if !bytes.Equal(before, ta.snapshot()) || len(ta.a.Portfolio) != 1 {
		t.Fatalf("a conflicting request changed the account")
	}
	// Another token is a new request.
	if res := ta.idem(w, createReq(token2, "body-2"), &CreatePortfolioCard{CardID: "card-2", Address: addrs[1]}); res.Err != nil {
		t.Fatal(res.Err)
	}
}

func TestIdempotencyTokensAreSeparatePerKey(t *testing.T) {
	ta := newTestAccount(t, PlanBase)
	a := ta.addKey(LevelWrite)
	b := ta.addKey(LevelWrite)
	if res := ta.idem(a, createReq(token1, "A"), &CreatePortfolioCard{CardID: "card-a", Address: addrs[0]}); res.Err != nil {
		t.Fatal(res.Err)
	}
	// The same token under another key is neither a replay nor a conflict.
	res := ta.idem(b, createReq(token1, "B"), &CreatePortfolioCard{CardID: "card-b", Address: addrs[1]})
	if res.Err != nil || cardOf(t, res).ID != "card-b" {
		t.Fatalf("key b with key a's token: %+v", res)
	}
	// Same token, same request under key b: a new request, so it meets
	// the duplicate instead of replaying key a's result.
	res = ta.idem(b, createReq(token2, "A"), &CreatePortfolioCard{CardID: "card-c", Address: addrs[0]})
	wantCode(t, res, CodeDuplicateAddress)
	// The owner has a namespace of its own as well.
	res = ta.idem(ta.owner, createReq(token1, "O"), &CreatePortfolioCard{CardID: "card-o", Address: addrs[2]})
	if res.Err != nil || cardOf(t, res).ID != "card-o" {
		t.Fatalf("owner with a key's token: %+v", res)
	}
	// Each key still replays its own.
	if res := ta.idem(a, createReq(token1, "A"), &CreatePortfolioCard{CardID: "card-a2", Address: addrs[0]}); res.Err != nil || cardOf(t, res).ID != "card-a" {
		t.Fatalf("key a replay %+v", res)
	}
	if res := ta.idem(b, createReq(token1, "B"), &CreatePortfolioCard{CardID: "card-b2", Address: addrs[1]}); res.Err != nil || cardOf(t, res).ID != "card-b" {
		t.Fatalf("key b replay %+v", res)
	}
	if len(ta.a.Portfolio) != 3 {
		t.Fatalf("%d cards", len(ta.a.Portfolio))
	}
}

func TestIdempotencyRecordsExpireAfter24Hours(t *testing.T) {
	ta := newTestAccount(t, PlanBase)
	w := ta.addKey(LevelWrite)
	req := createReq(token1, "body")
	c := ta.cmd(w, &CreatePortfolioCard{CardID: "card-1", Address: addrs[0]})
	c.Idempotency = req
	if res := ta.run(c); res.Err != nil {
		t.Fatal(res.Err)
	}
	start := c.At
	window := int64(idempotencyWindow)
	if window != int64(24*time.Hour) {
		t.Fatalf("replay window %v, the spec says 24 hours", idempotencyWindow)
	}

	// One nanosecond before the window closes the token still replays.
	late := ta.cmdAt(start+window-1, w, &CreatePortfolioCard{CardID: "card-2", Address: addrs[0]})
	late.Idempotency = req
	if res := ta.run(late); res.Err != nil || cardOf(t, res).ID != "card-1" {
		t.Fatalf("replay just inside the window: %+v", res)
	}
	if len(ta.a.Idempotency) != 1 {
		t.Fatalf("%d records inside the window", len(ta.a.Idempotency))
	}
	// At 24 hours it is a new request: here it meets the duplicate.
	expired := ta.cmdAt(start+window, w, &CreatePortfolioCard{CardID: "card-2", Address: addrs[0]})
	expired.Idempotency = req
	wantCode(t, ta.run(expired), CodeDuplicateAddress)
	if len(ta.a.Idempotency) != 0 {
		t.Fatalf("expired record kept: %d records", len(ta.a.Idempotency))
	}
	// And the token may now name a different request without conflict.
	fresh := ta.cmd(w, &CreatePortfolioCard{CardID: "card-3", Address: addrs[1]})
	fresh.Idempotency = createReq(token1, "another body")
	if res := ta.run(fresh); res.Err != nil {
		t.Fatalf("reuse after expiry: %v", res.Err)
	}
}

func TestIdempotencyPruningKeepsLiveRecords(t *testing.T) {
	ta := newTestAccount(t, PlanBase)
	w := ta.addKey(LevelWrite)
	first := ta.cmd(w, &CreatePortfolioCard{CardID: "card-1", Address: addrs[0]})
	first.Idempotency = createReq("token-aaaaaaaaaaaaaaaa", "1")
	ta.run(first)
	second := ta.cmdAt(first.At+int64(12*time.Hour), w, &CreatePortfolioCard{CardID: "card-2", Address: addrs[1]})
	second.Idempotency = createReq("token-bbbbbbbbbbbbbbbb", "2")
	ta.run(second)
	// Any command, even one without a token and even a failing one,
	// prunes the expired prefix.
	ta.run(ta.cmdAt(first.At+int64(24*time.Hour), w, &CreatePortfolioCard{CardID: "card-x", Address: "bad"}))
	if len(ta.a.Idempotency) != 1 || ta.a.Idempotency[0].Request.Token != "token-bbbbbbbbbbbbbbbb" {
		t.Fatalf("records after pruning: %+v", ta.a.Idempotency)
	}
}

// After a leader change the clock may step back, so records are not
// strictly in time order; an expired record behind a live one must still
// not replay.
func TestExpiredRecordBehindALiveOneDoesNotReplay(t *testing.T) {
	ta := newTestAccount(t, PlanBase)
	w := ta.addKey(LevelWrite)
	start := ta.at
	window := int64(idempotencyWindow)
	// Stored in this order: a record at start+1h, then one at start (the
	// new leader's clock was behind).
	live := ta.cmdAt(start+int64(time.Hour), w, &CreatePortfolioCard{CardID: "card-1", Address: addrs[0]})
	live.Idempotency = createReq(token1, "1")
	if res := ta.run(live); res.Err != nil {
		t.Fatal(res.Err)
	}
	stepBack := ta.cmdAt(start, w, &CreatePortfolioCard{CardID: "card-2", Address: addrs[1]})
	stepBack.Idempotency = createReq(token2, "2")
	if res := ta.run(stepBack); res.Err != nil {
		t.Fatal(res.Err)
	}
	// Just past the second record's window, but inside the first's.
	retry := ta.cmdAt(start+window+1, w, &CreatePortfolioCard{CardID: "card-3", Address: addrs[2]})
	retry.Idempotency = createReq(token2, "other body")
	res := ta.run(retry)
	if res.Err != nil || cardOf(t, res).ID != "card-3" {
		t.Fatalf("an expired token behind a live record was still honoured: %+v", res)
	}
	replay := ta.cmdAt(start+window+2, w, &CreatePortfolioCard{CardID: "card-4", Address: addrs[0]})
	replay.Idempotency = createReq(token1, "1")
	if res := ta.run(replay); res.Err != nil || cardOf(t, res).ID != "card-1" {
		t.Fatalf("the live record no longer replays: %+v", res)
	}
}

func TestReplayAfterAccessRemovedRevealsNothing(t *testing.T) {
	ta := newTestAccount(t, PlanBase)
	w := ta.addKey(LevelWrite)
	req := createReq(token1, "body")
	res := ta.idem(w, req, &CreatePortfolioCard{CardID: "card-1", Address: addrs[0], CardFields: CardFields{Name: ptr("Private name")}})
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	// A read grant still allows the replay.
	ta.setGrant("card-1", LevelRead)
	if again := ta.idem(w, req, &CreatePortfolioCard{CardID: "card-2", Address: addrs[0]}); again.Err != nil {
		t.Fatalf("replay with read access: %v", again.Err)
	}
	ta.setGrant("card-1", LevelNone)
	again := ta.idem(w, req, &CreatePortfolioCard{CardID: "card-2", Address: addrs[0], CardFields: CardFields{Name: ptr("Private name")}})
	err := wantCode(t, again, CodeNotFound)
	if again.Body != nil || again.Status != 0 {
		t.Fatalf("withheld replay carries %d %v", again.Status, again.Body)
	}
	mustNotMention(t, "withheld replay", err.Message, "card-1", addrs[0], "Private name")
	if len(ta.a.Portfolio) != 1 {
		t.Fatalf("the replay created a card")
	}
	// Once the card is gone, the replay also reveals nothing.
	ta.mustOK(ta.owner, &DeletePortfolioCard{CardID: "card-1", ExpectedVersion: versionString(ta.card("card-1").Version)})
	wantCode(t, ta.idem(w, req, &CreatePortfolioCard{CardID: "card-3", Address: addrs[0]}), CodeNotFound)
	if len(ta.a.Portfolio) != 0 {
		t.Fatalf("a replay after delete re-created the card")
	}
}

func TestFailedRequestsAreNotRecorded(t *testing.T) {
	ta := newTestAccount(t, PlanBase)
	w := ta.addKey(LevelWrite)
	r := ta.addKey(LevelRead)
	for i := range 10 {
		ta.createCard(ta.owner, addrs[i])
	}
	req := createReq(token1, "body")
	wantCode(t, ta.idem(w, req, &CreatePortfolioCard{CardID: "card-x", Address: addrs[10]}), CodeOverviewFull)
	wantCode(t, ta.idem(w, req, &CreatePortfolioCard{CardID: "card-x", Address: "garbage"}), CodeValidation)
	wantCode(t, ta.idem(r, req, &CreatePortfolioCard{CardID: "card-x", Address: addrs[10]}), CodeForbidden)
	if len(ta.a.Idempotency) != 0 {
		t.Fatalf("failed requests were recorded: %+v", ta.a.Idempotency)
	}
	// After making room, the same token and request is applied for real.
	c := ta.a.Portfolio[0]
	ta.mustOK(ta.owner, &DeletePortfolioCard{CardID: c.ID, ExpectedVersion: versionString(c.Version)})
	res := ta.idem(w, req, &CreatePortfolioCard{CardID: "card-x", Address: addrs[10]})
	if res.Err != nil || cardOf(t, res).ID != "card-x" {
		t.Fatalf("retry after room was made: %+v", res)
	}
	// A different request under the same token after a failure is not a
	// conflict either, since nothing was recorded for the failure.
	wantCode(t, ta.idem(w, createReq(token2, "a"), &CreatePortfolioCard{CardID: "card-y", Address: "garbage"}), CodeValidation)
	wantCode(t, ta.idem(w, createReq(token2, "b"), &CreatePortfolioCard{CardID: "card-y", Address: addrs[11]}), CodeOverviewFull)
}

func TestReplayNeedsALiveCredential(t *testing.T) {
	ta := newTestAccount(t, PlanBase)
	w := ta.addKey(LevelWrite)
	req := createReq(token1, "body")
	if res := ta.idem(w, req, &CreatePortfolioCard{CardID: "card-1", Address: addrs[0]}); res.Err != nil {
		t.Fatal(res.Err)
	}
	ta.mustOK(ta.owner, &RevokeKey{KeyID: w.KeyID})
	wantCode(t, ta.idem(w, req, &CreatePortfolioCard{CardID: "card-2", Address: addrs[0]}), CodeUnauthorized)
}

func TestIdempotencyRecordsAreBounded(t *testing.T) {
	ta := newTestAccount(t, PlanBase)
	w := ta.addKey(LevelWrite)
	for i := range idempotencyRecordsMax + 3 {
		c := ta.cmd(w, &DeletePortfolioCard{})
		c.Idempotency = createReq(fmt.Sprintf("token-%012d", i), "b")
		ta.a.remember(c, ok(DeletedView{Deleted: true}), ResourceRef{Kind: ResourceAccount})
	}
	if len(ta.a.Idempotency) != idempotencyRecordsMax {
		t.Fatalf("%d records, bound is %d", len(ta.a.Idempotency), idempotencyRecordsMax)
	}
	if got := ta.a.Idempotency[0].Request.Token; got != fmt.Sprintf("token-%012d", 3) {
		t.Fatalf("oldest kept record %s, the three oldest should be gone", got)
	}
	var body map[string]bool
	if err := json.Unmarshal(ta.a.Idempotency[0].Body, &body); err != nil || !body["deleted"] {
		t.Fatalf("record body %s", ta.a.Idempotency[0].Body)
	}
}

// A replayed result without a body (204) comes back without one, and the
// owner and the system have token namespaces of their own.
func TestIdempotentReplayOfABodilessResult(t *testing.T) {
	ta := newTestAccount(t, PlanBase)
	k1 := ta.addKey(LevelRead)
	k2 := ta.addKey(LevelRead)
	req := &IdempotencyRequest{Token: token1, Method: "DELETE", Path: "/owner/v1/keys/" + k1.KeyID, BodyHash: hashOf("")}
	first := ta.idem(ta.owner, req, &RevokeKey{KeyID: k1.KeyID})
	if first.Err != nil || first.Status != 204 || first.Body != nil {
		t.Fatalf("revoke %+v", first)
	}
	// Without the token a second revoke is NOT_FOUND; with it, 204 again.
	again := ta.idem(ta.owner, req, &RevokeKey{KeyID: k1.KeyID})
	if again.Err != nil || again.Status != 204 || again.Body != nil {
		t.Fatalf("replayed revoke %+v", again)
	}
	// The system's token namespace is not the owner's.
	sys := ta.idem(systemP, &IdempotencyRequest{Token: token1, Method: "DELETE", Path: "/x", BodyHash: hashOf("")}, &RevokeKey{KeyID: k2.KeyID})
	if sys.Err != nil || ta.a.key(k2.KeyID) != nil {
		t.Fatalf("system request with the owner's token: %+v", sys)
	}
	if len(ta.a.Idempotency) != 2 || ta.a.Idempotency[0].Principal == ta.a.Idempotency[1].Principal {
		t.Fatalf("records %+v", ta.a.Idempotency)
	}
}
