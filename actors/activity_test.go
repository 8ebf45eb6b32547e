package actors

import (
	"slices"
	"testing"
	"time"
)

// entry is an activity entry of key at the test account's clock.
func (ta *testAccount) entry(key Principal, op string, status int, code Code, ref ResourceRef) ActivityEntry {
	return ActivityEntry{KeyID: key.KeyID, Op: op, Resource: ref, Status: status, Code: code, Count: 1, First: ta.at, Last: ta.at}
}

func (ta *testAccount) activity(q ActivityQuery) ActivityPage {
	ta.t.Helper()
	return ta.mustQuery(ta.ownerCred(), q).Body.(ActivityPage)
}

func TestRecordActivityAppendsAKeysEntriesInOrder(t *testing.T) {
	ta := newTestAccount(t, PlanBase)
	r := ta.addKey(LevelRead)
	w := ta.addKey(LevelWrite)
	card := ResourceRef{Kind: ResourcePortfolioCard, ID: "c1"}
	seqBefore := ta.a.Seq
	ta.mustOK(r, &RecordActivity{Entries: []ActivityEntry{
		ta.entry(r, "GET /v1/portfolio/cards/{card_id}", 200, "", card),
		ta.entry(r, "PATCH /v1/portfolio/cards/{card_id}", 403, CodeForbidden, card),
	}})
	ta.mustOK(w, &RecordActivity{Entries: []ActivityEntry{ta.entry(w, "GET /v1/me", 200, "", ResourceRef{})}})
	if len(ta.a.Activity) != 3 || ta.a.Activity[0].Seq != 1 || ta.a.Activity[2].Seq != 3 || ta.a.ActivitySeq != 3 {
		t.Fatalf("activity %+v", ta.a.Activity)
	}
	// Recording activity is not a change an agent or a version sees.
	if ta.a.Seq != seqBefore {
		t.Fatalf("recording activity moved the account's sequence from %d to %d", seqBefore, ta.a.Seq)
	}
	// The owner reads it newest first.
	page := ta.activity(ActivityQuery{})
	if len(page.Entries) != 3 || page.Entries[0].KeyID != w.KeyID || page.Entries[2].Op != "GET /v1/portfolio/cards/{card_id}" || page.Next != 0 {
		t.Fatalf("newest first: %+v", page)
	}
}

func TestRecordActivityRefusesWhatTheEdgeCouldNotHaveSent(t *testing.T) {
	ta := newTestAccount(t, PlanBase)
	k := ta.addKey(LevelRead)
	other := ta.addKey(LevelRead)
	good := ta.entry(k, "GET /v1/me", 200, "", ResourceRef{})
	with := func(f func(e *ActivityEntry)) *RecordActivity {
		e := good
		f(&e)
		// A bad entry after a good one: nothing of the record is kept.
		return &RecordActivity{Entries: []ActivityEntry{good, e}}
	}
	ta.mustFail(CodeForbidden, k, with(func(e *ActivityEntry) { e.KeyID = other.KeyID }))
	ta.mustFail(CodeValidation, k, with(func(e *ActivityEntry) { e.Op = "" }))
	ta.mustFail(CodeValidation, k, with(func(e *ActivityEntry) { e.Op = "GET /v1/\x00" }))
	ta.mustFail(CodeValidation, k, with(func(e *ActivityEntry) { e.Op = "GET /" + string(make([]byte, activityOpBytesMax)) }))
	ta.mustFail(CodeValidation, k, with(func(e *ActivityEntry) { e.Status = 99 }))
	ta.mustFail(CodeValidation, k, with(func(e *ActivityEntry) { e.Count = 0 }))
	ta.mustFail(CodeValidation, k, with(func(e *ActivityEntry) { e.Last = e.First - 1 }))
	ta.mustFail(CodeValidation, k, with(func(e *ActivityEntry) { e.Seq = 7 }))
	ta.mustFail(CodeValidation, k, with(func(e *ActivityEntry) { e.Resource.ID = string(make([]byte, activityIDBytesMax+1)) }))
	ta.mustFail(CodeValidation, k, &RecordActivity{})
	many := make([]ActivityEntry, ActivityFlushMax+2)
	for i := range many {
		many[i] = good
	}
	ta.mustFail(CodeValidation, k, &RecordActivity{Entries: many})
	// Only a key records activity, its own; a revoked key records none.
	ta.mustFail(CodeForbidden, ta.owner, &RecordActivity{Entries: []ActivityEntry{good}})
	ta.mustOK(ta.owner, &RevokeKey{KeyID: k.KeyID})
	ta.mustFail(CodeUnauthorized, k, &RecordActivity{Entries: []ActivityEntry{good}})
}

func TestActivityIsBoundedByCountAndAge(t *testing.T) {
	ta := newTestAccount(t, PlanBase)
	k := ta.addKey(LevelRead)
	batch := make([]ActivityEntry, ActivityFlushMax)
	for n := 0; n*ActivityFlushMax < activityEntriesMax+ActivityFlushMax; n++ {
		ta.cmd(k, nil) // moves the clock
		for i := range batch {
			batch[i] = ta.entry(k, "GET /v1/me", 200, "", ResourceRef{})
		}
		ta.mustOK(k, &RecordActivity{Entries: batch})
	}
	if len(ta.a.Activity) != activityEntriesMax || ta.a.Activity[len(ta.a.Activity)-1].Seq != ta.a.ActivitySeq {
		t.Fatalf("%d entries kept, last seq %d of %d", len(ta.a.Activity), ta.a.Activity[len(ta.a.Activity)-1].Seq, ta.a.ActivitySeq)
	}
	// A week later, one more record leaves only itself.
	ta.cmdAt(ta.at+int64(activityAgeMax)+int64(time.Hour), k, nil)
	ta.mustOK(k, &RecordActivity{Entries: []ActivityEntry{ta.entry(k, "GET /v1/me", 200, "", ResourceRef{})}})
	if len(ta.a.Activity) != 1 {
		t.Fatalf("after a week %d entries are kept", len(ta.a.Activity))
	}
}

func TestActivityQueryFiltersAndPages(t *testing.T) {
	ta := newTestAccount(t, PlanBase)
	a := ta.addKey(LevelRead)
	b := ta.addKey(LevelWrite)
	space := ResourceRef{Kind: ResourceSpace, ID: "sp1"}
	start := ta.at
	for i := 0; i < 30; i++ {
		key := []Principal{a, b}[i%2]
		ref := ResourceRef{}
		if i%3 == 0 {
			ref = space
		}
		ta.cmd(key, nil)
		ta.mustOK(key, &RecordActivity{Entries: []ActivityEntry{ta.entry(key, "GET /v1/bookmark-spaces/{space_id}", 200, "", ref)}})
	}
	if p := ta.activity(ActivityQuery{KeyID: a.KeyID}); len(p.Entries) != 15 || p.Entries[0].KeyID != a.KeyID {
		t.Fatalf("key a: %d entries", len(p.Entries))
	}
	if p := ta.activity(ActivityQuery{ResourceID: "sp1"}); len(p.Entries) != 10 {
		t.Fatalf("Space sp1: %d entries", len(p.Entries))
	}
	// Each record was two seconds after the last (cmd moves the clock a
	// second, mustOK another): entries 5 to 9 fall in this range.
	since, until := start+int64(10*time.Second), start+int64(19*time.Second)
	if p := ta.activity(ActivityQuery{Since: since, Until: until}); len(p.Entries) != 5 {
		t.Fatalf("time range: %d entries %+v", len(p.Entries), p.Entries)
	}
	// Pages of 7, newest first, through Next, cover every entry once.
	var seqs []uint64
	for before := uint64(0); ; {
		p := ta.activity(ActivityQuery{Before: before, Limit: 7})
		for _, e := range p.Entries {
			seqs = append(seqs, e.Seq)
		}
		if p.Next == 0 {
			break
		}
		before = p.Next
	}
	if len(seqs) != 30 || seqs[0] != 30 || seqs[29] != 1 {
		t.Fatalf("paged seqs %v", seqs)
	}
	// Keys cannot read activity.
	if res := ta.query(ta.keyCred(b), ActivityQuery{}); res.err == nil || res.err.Code != CodeForbidden {
		t.Fatalf("a key read activity: %+v", res)
	}
}

// ChangesOnly keeps the writes the API made (and the line that counts a
// window's other changes): no reads, no refused writes, no other lines.
func TestActivityQueryChangesOnly(t *testing.T) {
	ta := newTestAccount(t, PlanBase)
	w := ta.addKey(LevelWrite)
	card := ResourceRef{Kind: ResourcePortfolioCard, ID: "c1"}
	ta.mustOK(w, &RecordKeyActivity{Entries: []ActivityEntry{
		ta.entry(w, "GET /v1/portfolio/cards/{card_id}", 200, "", card),
		ta.entry(w, "PATCH /v1/portfolio/cards/{card_id}", 200, "", card),
		ta.entry(w, "PATCH /v1/portfolio/cards/{card_id}", 409, CodeStaleVersion, card),
		ta.entry(w, "DELETE /v1/portfolio/cards/{card_id}", 204, "", card),
		ta.entry(w, ActivityUnknown, 404, CodeNotFound, ResourceRef{}),
		{KeyID: w.KeyID, Op: ActivityOther, Count: 3, First: ta.at, Last: ta.at},
		{KeyID: w.KeyID, Op: ActivityOtherChanges, Count: 2, First: ta.at, Last: ta.at},
	}})
	page := ta.activity(ActivityQuery{ChangesOnly: true})
	var got []string
	for _, e := range page.Entries {
		got = append(got, e.Op)
	}
	want := []string{ActivityOtherChanges, "DELETE /v1/portfolio/cards/{card_id}", "PATCH /v1/portfolio/cards/{card_id}"}
	if !slices.Equal(got, want) || page.Entries[2].Status != 200 {
		t.Fatalf("changes only: %q, want %q", got, want)
	}
	if all := ta.activity(ActivityQuery{}); len(all.Entries) != 7 {
		t.Fatalf("without the filter: %d lines", len(all.Entries))
	}
}
