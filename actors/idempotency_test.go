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
	return &IdempotencyRequest{Token: token, Method: "POST", Path: "/v1/portfolio/cards", BodyHash: hashOf(body), PerPrincipal: true}
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
	if first.err != nil || first.Status != 201 {
		t.Fatalf("first create %+v", first)
	}
	afterFirst := ta.snapshot()
	seq, events := ta.a.Seq, len(ta.a.Audit)

	// The retry carries a fresh card id (the edge makes one per request),
	// yet no second card is made and the first card comes back.
	for i := range 3 {
		again := ta.idem(w, req, &CreatePortfolioCard{CardID: fmt.Sprintf("card-retry-%d", i), Address: addrs[0], CardFields: CardFields{Name: ptr("n")}})
		if again.err != nil {
			t.Fatalf("replay %d: %v", i, again.err)
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
	if first.err != nil {
		t.Fatal(first.err)
	}
	// Without the token the retry would be NOT_FOUND; with it, the
	// prior result comes back.
	again := ta.idem(w, req, del)
	if again.err != nil || again.Status != 200 || bodyJSON(t, again.Body) != `{"deleted":true}` {
		t.Fatalf("delete replay %+v", again)
	}
	ta.mustFail(CodeNotFound, w, del)
}

func TestIdempotencyConflictOnADifferentRequest(t *testing.T) {
	ta := newTestAccount(t, PlanBase)
	w := ta.addKey(LevelWrite)
	req := createReq(token1, "body-1")
	if res := ta.idem(w, req, &CreatePortfolioCard{CardID: "card-1", Address: addrs[0]}); res.err != nil {
		t.Fatal(res.err)
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
	if res := ta.idem(w, createReq(token2, "body-2"), &CreatePortfolioCard{CardID: "card-2", Address: addrs[1]}); res.err != nil {
		t.Fatal(res.err)
	}
}

func TestIdempotencyTokensAreSeparatePerKey(t *testing.T) {
	ta := newTestAccount(t, PlanBase)
	a := ta.addKey(LevelWrite)
	b := ta.addKey(LevelWrite)
	if res := ta.idem(a, createReq(token1, "A"), &CreatePortfolioCard{CardID: "card-a", Address: addrs[0]}); res.err != nil {
		t.Fatal(res.err)
	}
	// The same token under another key is neither a replay nor a conflict.
	res := ta.idem(b, createReq(token1, "B"), &CreatePortfolioCard{CardID: "card-b", Address: addrs[1]})
	if res.err != nil || cardOf(t, res).ID != "card-b" {
		t.Fatalf("key b with key a's token: %+v", res)
	}
	// Same token, same request under key b: a new request, so it meets
	// the duplicate instead of replaying key a's result.
	res = ta.idem(b, createReq(token2, "A"), &CreatePortfolioCard{CardID: "card-c", Address: addrs[0]})
	wantCode(t, res, CodeDuplicateAddress)
	// The owner has a namespace of its own as well.
	res = ta.idem(ta.owner, createReq(token1, "O"), &CreatePortfolioCard{CardID: "card-o", Address: addrs[2]})
	if res.err != nil || cardOf(t, res).ID != "card-o" {
		t.Fatalf("owner with a key's token: %+v", res)
	}
	// Each key still replays its own.
	if res := ta.idem(a, createReq(token1, "A"), &CreatePortfolioCard{CardID: "card-a2", Address: addrs[0]}); res.err != nil || cardOf(t, res).ID != "card-a" {
		t.Fatalf("key a replay %+v", res)
	}
	if res := ta.idem(b, createReq(token1, "B"), &CreatePortfolioCard{CardID: "card-b2", Address: addrs[1]}); res.err != nil || cardOf(t, res).ID != "card-b" {
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
	if res := ta.run(c); res.err != nil {
		t.Fatal(res.err)
	}
	start := c.At
	window := int64(idempotencyWindow)
	if window != int64(24*time.Hour) {
		t.Fatalf("replay window %v, the spec says 24 hours", idempotencyWindow)
	}

	// One nanosecond before the window closes the token still replays.
	late := ta.cmdAt(start+window-1, w, &CreatePortfolioCard{CardID: "card-2", Address: addrs[0]})
	late.Idempotency = req
	if res := ta.run(late); res.err != nil || cardOf(t, res).ID != "card-1" {
		t.Fatalf("replay just inside the window: %+v", res)
	}
	if ta.a.Idempotency.Len() != 1 {
		t.Fatalf("%d records inside the window", ta.a.Idempotency.Len())
	}
	// At 24 hours it is a new request: here it meets the duplicate.
	expired := ta.cmdAt(start+window, w, &CreatePortfolioCard{CardID: "card-2", Address: addrs[0]})
	expired.Idempotency = req
	wantCode(t, ta.run(expired), CodeDuplicateAddress)
	if ta.a.Idempotency.Len() != 0 {
		t.Fatalf("expired record kept: %d records", ta.a.Idempotency.Len())
	}
	// And the token may now name a different request without conflict.
	fresh := ta.cmd(w, &CreatePortfolioCard{CardID: "card-3", Address: addrs[1]})
	fresh.Idempotency = createReq(token1, "another body")
	if res := ta.run(fresh); res.err != nil {
		t.Fatalf("reuse after expiry: %v", res.err)
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
	if ta.a.Idempotency.Len() != 1 || ta.a.Idempotency.inApplyOrder()[0].Request.Token != "token-bbbbbbbbbbbbbbbb" {
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
	if res := ta.run(live); res.err != nil {
		t.Fatal(res.err)
	}
	stepBack := ta.cmdAt(start, w, &CreatePortfolioCard{CardID: "card-2", Address: addrs[1]})
	stepBack.Idempotency = createReq(token2, "2")
	if res := ta.run(stepBack); res.err != nil {
		t.Fatal(res.err)
	}
	// Just past the second record's window, but inside the first's.
	retry := ta.cmdAt(start+window+1, w, &CreatePortfolioCard{CardID: "card-3", Address: addrs[2]})
	retry.Idempotency = createReq(token2, "other body")
	res := ta.run(retry)
	if res.err != nil || cardOf(t, res).ID != "card-3" {
		t.Fatalf("an expired token behind a live record was still honoured: %+v", res)
	}
	replay := ta.cmdAt(start+window+2, w, &CreatePortfolioCard{CardID: "card-4", Address: addrs[0]})
	replay.Idempotency = createReq(token1, "1")
	if res := ta.run(replay); res.err != nil || cardOf(t, res).ID != "card-1" {
		t.Fatalf("the live record no longer replays: %+v", res)
	}
}

func TestReplayAfterAccessRemovedRevealsNothing(t *testing.T) {
	ta := newTestAccount(t, PlanBase)
	w := ta.addKey(LevelWrite)
	req := createReq(token1, "body")
	res := ta.idem(w, req, &CreatePortfolioCard{CardID: "card-1", Address: addrs[0], CardFields: CardFields{Name: ptr("Private name")}})
	if res.err != nil {
		t.Fatal(res.err)
	}
	// A read grant still allows the replay.
	ta.setGrant("card-1", LevelRead)
	if again := ta.idem(w, req, &CreatePortfolioCard{CardID: "card-2", Address: addrs[0]}); again.err != nil {
		t.Fatalf("replay with read access: %v", again.err)
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
	if ta.a.Idempotency.Len() != 0 {
		t.Fatalf("failed requests were recorded: %+v", ta.a.Idempotency)
	}
	// After making room, the same token and request is applied for real.
	c := ta.a.Portfolio[0]
	ta.mustOK(ta.owner, &DeletePortfolioCard{CardID: c.ID, ExpectedVersion: versionString(c.Version)})
	res := ta.idem(w, req, &CreatePortfolioCard{CardID: "card-x", Address: addrs[10]})
	if res.err != nil || cardOf(t, res).ID != "card-x" {
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
	if res := ta.idem(w, req, &CreatePortfolioCard{CardID: "card-1", Address: addrs[0]}); res.err != nil {
		t.Fatal(res.err)
	}
	ta.mustOK(ta.owner, &RevokeKey{KeyID: w.KeyID})
	wantCode(t, ta.idem(w, req, &CreatePortfolioCard{CardID: "card-2", Address: addrs[0]}), CodeUnauthorized)
}

// rememberAs stores a record for principal p as apply would, at the next
// second, with a token made from i.
func (ta *testAccount) rememberAs(p Principal, i int, perPrincipal bool) {
	c := ta.cmd(p, &DeletePortfolioCard{})
	c.Idempotency = &IdempotencyRequest{Token: fmt.Sprintf("token-%012d", i), Method: "DELETE", Path: "/v1/x", BodyHash: hashOf("b"), PerPrincipal: perPrincipal}
	ta.a.remember(c, ok(DeletedView{Deleted: true}), ResourceRef{Kind: ResourceAccount})
}

func tokensOf(records []*IdempotencyRecord) []string {
	out := make([]string, len(records))
	for i, r := range records {
		out[i] = r.Request.Token
	}
	return out
}

// A principal's records are bounded by what the spec's per-key limit lets
// one key write in the replay window; a full queue gives up its own
// oldest record and no one else's.
func TestIdempotencyRecordsAreBoundedPerPrincipal(t *testing.T) {
	if idempotencyRecordsPerPrincipalMax != 240+240*24*60 {
		t.Fatalf("per-principal bound %d, want 240 + 240 × 1,440 (the spec's per-key limit over 24 hours)", idempotencyRecordsPerPrincipalMax)
	}
	ta := newTestAccount(t, PlanBase)
	w := ta.addKey(LevelWrite)
	ta.rememberAs(ta.owner, -1, true)
	// The records are made just under a quarter second apart, as a key at its limit
	// makes them, so all stay inside the window.
	for i := range idempotencyRecordsPerPrincipalMax + 3 {
		ta.at += int64(time.Minute/AgentRequestsPerKeyPerMinute-time.Millisecond) - int64(time.Second)
		ta.rememberAs(w, i, true)
	}
	ta.rememberAs(ta.owner, -2, true)
	who := principalKey(w)
	if got := ta.a.Idempotency.PrincipalLen(who); got != idempotencyRecordsPerPrincipalMax {
		t.Fatalf("the key holds %d records, its bound is %d", got, idempotencyRecordsPerPrincipalMax)
	}
	if got := ta.a.Idempotency.PrincipalLen("owner"); got != 2 {
		t.Fatalf("the owner holds %d records after the key filled its queue, want its 2", got)
	}
	q := ta.a.Idempotency.queue(who)
	if oldest := q.records[0].Request.Token; oldest != fmt.Sprintf("token-%012d", 3) {
		t.Fatalf("the key's oldest record is %s; its three oldest should be gone", oldest)
	}
	for i := range 3 {
		if ta.a.Idempotency.newest(who, fmt.Sprintf("token-%012d", i)) != nil {
			t.Fatalf("evicted token %d still found", i)
		}
	}
	all := ta.a.Idempotency.inApplyOrder()
	if first, last := all[0].Request.Token, all[len(all)-1].Request.Token; first != "token--00000000001" || last != "token--00000000002" {
		t.Fatalf("apply order runs from %s to %s, want the owner's first and last records at its ends", first, last)
	}
	var body map[string]bool
	if err := json.Unmarshal(q.records[0].Body, &body); err != nil || !body["deleted"] {
		t.Fatalf("record body %s", q.records[0].Body)
	}
}

// Log entries written before issue 13 carry no per-principal flag. Their
// records obey the bound they were applied under, 2,000 per account with
// the account's oldest record going first whoever made it, so that a log
// replayed after the upgrade reaches the state it reached before.
func TestIdempotencyRecordsOfOldEntriesKeepTheAccountBound(t *testing.T) {
	ta := newTestAccount(t, PlanBase)
	w := ta.addKey(LevelWrite)
	ta.rememberAs(w, -1, false)
	for i := range idempotencyRecordsBefore13Max + 2 {
		ta.rememberAs(ta.owner, i, false)
	}
	if ta.a.Idempotency.Len() != idempotencyRecordsBefore13Max || ta.a.Idempotency.PrincipalLen(principalKey(w)) != 0 {
		t.Fatalf("%d records, the key's %d; the old bound keeps the account's 2,000 newest", ta.a.Idempotency.Len(), ta.a.Idempotency.PrincipalLen(principalKey(w)))
	}
	if got := ta.a.Idempotency.inApplyOrder()[0].Request.Token; got != fmt.Sprintf("token-%012d", 2) {
		t.Fatalf("oldest kept record %s; the key's and the owner's two oldest should be gone", got)
	}
	// The old agent's replay, as the old code answered it, is a new request.
	old := ta.cmd(w, &CreatePortfolioCard{CardID: "card-1", Address: addrs[0]})
	old.Idempotency = &IdempotencyRequest{Token: "token--00000000001", Method: "DELETE", Path: "/v1/x", BodyHash: hashOf("b")}
	if res := ta.run(old); res.err != nil || cardOf(t, res).ID != "card-1" {
		t.Fatalf("an evicted token under the old bound: %+v", res)
	}
	// A record made under the new rule joins the queues without evicting.
	ta.rememberAs(ta.owner, -2, true)
	if ta.a.Idempotency.Len() != idempotencyRecordsBefore13Max+1 {
		t.Fatalf("%d records after a per-principal record", ta.a.Idempotency.Len())
	}
}

// The queues are bounded by the live principals: before a new principal's
// queue starts with the account at that bound, the queues of revoked keys
// are dropped (a revoked key's records can never be replayed).
func TestRevokedKeysRecordsMakeRoomForNewPrincipals(t *testing.T) {
	ta := newTestAccount(t, PlanBase)
	ta.rememberAs(systemP, 0, true)
	ta.rememberAs(ta.owner, 0, true)
	keys := make([]Principal, 0, keysMax)
	for i := range keysMax {
		k := ta.addKey(LevelWrite)
		keys = append(keys, k)
		ta.rememberAs(k, i, true)
	}
	if n := len(ta.a.Idempotency.queues); n != idempotencyPrincipalsMax {
		t.Fatalf("%d queues, want %d", n, idempotencyPrincipalsMax)
	}
	// A revoked key's records stay until a new principal needs its place.
	ta.mustOK(ta.owner, &RevokeKey{KeyID: keys[7].KeyID})
	ta.rememberAs(keys[8], 1, true)
	if ta.a.Idempotency.PrincipalLen(principalKey(keys[7])) != 1 {
		t.Fatalf("a revoked key's record went before a new principal needed room")
	}
	fresh := ta.addKey(LevelWrite)
	ta.rememberAs(fresh, 0, true)
	if ta.a.Idempotency.PrincipalLen(principalKey(keys[7])) != 0 || len(ta.a.Idempotency.queues) != idempotencyPrincipalsMax {
		t.Fatalf("after a new key's first record: revoked key holds %d, %d queues", ta.a.Idempotency.PrincipalLen(principalKey(keys[7])), len(ta.a.Idempotency.queues))
	}
	for _, who := range []string{"system", "owner", principalKey(keys[0]), principalKey(keys[99]), principalKey(fresh)} {
		if ta.a.Idempotency.PrincipalLen(who) == 0 {
			t.Fatalf("%s lost its records", who)
		}
	}
	if ta.a.Idempotency.PrincipalLen(principalKey(keys[8])) != 2 || ta.a.Idempotency.Len() != idempotencyPrincipalsMax+1 {
		t.Fatalf("%d records in all", ta.a.Idempotency.Len())
	}
}

// Expiry is by command time, in apply order across all principals, and
// the encoding (a snapshot's) keeps that order and every record.
func TestIdempotencyRecordsRoundTripInApplyOrder(t *testing.T) {
	ta := newTestAccount(t, PlanBase)
	w := ta.addKey(LevelWrite)
	for i := range 6 {
		p := ta.owner
		if i%3 == 1 {
			p = w
		}
		ta.rememberAs(p, i, i != 5)
	}
	want := tokensOf(ta.a.Idempotency.inApplyOrder())
	encoded := ta.snapshot()
	var back Account
	if err := json.Unmarshal(encoded, &back); err != nil {
		t.Fatal(err)
	}
	if got := tokensOf(back.Idempotency.inApplyOrder()); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("decoded order %v, want %v", got, want)
	}
	again, err := json.Marshal(&back)
	if err != nil || !bytes.Equal(again, encoded) {
		t.Fatalf("the decoded account encodes differently (%v):\n%s\n%s", err, again, encoded)
	}
	if back.Idempotency.PrincipalLen("owner") != 4 || back.Idempotency.PrincipalLen(principalKey(w)) != 2 {
		t.Fatalf("decoded queues: owner %d, key %d", back.Idempotency.PrincipalLen("owner"), back.Idempotency.PrincipalLen(principalKey(w)))
	}
	// The records were made a second apart: 24 hours after the third, the
	// three oldest (two of the owner's and one of the key's) have expired.
	third := back.Idempotency.inApplyOrder()[2].At
	back.pruneIdempotency(third + int64(idempotencyWindow))
	if got := tokensOf(back.Idempotency.inApplyOrder()); strings.Join(got, ",") != strings.Join(want[3:], ",") {
		t.Fatalf("after expiry %v, want %v", got, want[3:])
	}
	// An account encoded with no records (null) decodes to none.
	var empty Account
	if err := json.Unmarshal([]byte(`{"idempotency":null}`), &empty); err != nil || empty.Idempotency.Len() != 0 {
		t.Fatalf("null records: %v, %d", err, empty.Idempotency.Len())
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
	if first.err != nil || first.Status != 204 || first.Body != nil {
		t.Fatalf("revoke %+v", first)
	}
	// Without the token a second revoke is NOT_FOUND; with it, 204 again.
	again := ta.idem(ta.owner, req, &RevokeKey{KeyID: k1.KeyID})
	if again.err != nil || again.Status != 204 || again.Body != nil {
		t.Fatalf("replayed revoke %+v", again)
	}
	// The system's token namespace is not the owner's.
	sys := ta.idem(systemP, &IdempotencyRequest{Token: token1, Method: "DELETE", Path: "/x", BodyHash: hashOf("")}, &RevokeKey{KeyID: k2.KeyID})
	if sys.err != nil || ta.a.key(k2.KeyID) != nil {
		t.Fatalf("system request with the owner's token: %+v", sys)
	}
	if ta.a.Idempotency.Len() != 2 || ta.a.Idempotency.inApplyOrder()[0].Principal == ta.a.Idempotency.inApplyOrder()[1].Principal {
		t.Fatalf("records %+v", ta.a.Idempotency)
	}
}

// Issue 13: the owner's 2,002 idempotent writes pushed an agent's record
// out of a store capped at 2,000 per account, and the agent's retry of a
// token from a minute earlier created a second card. Records are now
// bounded per principal, so another principal's writes cannot evict them.
func TestOwnerWritesDoNotEvictAnAgentsRecords(t *testing.T) {
	ta := newTestAccount(t, PlanBase)
	agent := ta.addKey(LevelWrite)
	req := createReq(token1, `{"address":"`+addrs[0]+`"}`)
	first := ta.idem(agent, req, &CreatePortfolioCard{CardID: "card-agent", Address: addrs[0], CardFields: CardFields{Name: ptr("agent's")}})
	if first.err != nil {
		t.Fatal(first.err)
	}
	// The owner creates and deletes a card 1,001 times: 2,002 idempotent
	// writes, each with a token of its own, within the replay window.
	const ownerWrites = 2002
	for i := 0; i < ownerWrites; i += 2 {
		id := fmt.Sprintf("card-owner-%d", i)
		create := &IdempotencyRequest{Token: fmt.Sprintf("owner-create-%08d", i), Method: "POST", Path: "/owner/v1/portfolio/cards", BodyHash: hashOf(id), PerPrincipal: true}
		card := cardOf(t, ta.idem(ta.owner, create, &CreatePortfolioCard{CardID: id, Address: addrs[1]}))
		del := &IdempotencyRequest{Token: fmt.Sprintf("owner-delete-%08d", i), Method: "DELETE", Path: "/owner/v1/portfolio/cards/" + id, BodyHash: hashOf(card.Version), PerPrincipal: true}
		if res := ta.idem(ta.owner, del, &DeletePortfolioCard{CardID: id, ExpectedVersion: card.Version}); res.err != nil {
			t.Fatalf("owner delete %d: %v", i, res.err)
		}
	}
	if ta.at-t0 >= int64(idempotencyWindow) {
		t.Fatalf("the owner's writes took %v, past the replay window", time.Duration(ta.at-t0))
	}
	seq := ta.a.Seq
	again := ta.idem(agent, req, &CreatePortfolioCard{CardID: "card-agent-retry", Address: addrs[0], CardFields: CardFields{Name: ptr("agent's")}})
	if again.err != nil {
		t.Fatalf("the agent's replay after %d owner writes: %v", ownerWrites, again.err)
	}
	if bodyJSON(t, again.Body) != bodyJSON(t, first.Body) || again.Status != first.Status {
		t.Fatalf("the agent's replay gave %d %s, first was %d %s", again.Status, bodyJSON(t, again.Body), first.Status, bodyJSON(t, first.Body))
	}
	if len(ta.a.Portfolio) != 1 || ta.a.Seq != seq || ta.card("card-agent-retry") != nil {
		t.Fatalf("the replay changed the account: cards %v, seq %d→%d", ta.portfolioIDs(), seq, ta.a.Seq)
	}
}
