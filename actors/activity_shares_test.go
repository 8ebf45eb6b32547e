package actors

import (
	"fmt"
	"testing"
	"time"
)

// readFlood records n records of ActivityFlushMax distinct reads of key,
// each of a resource no other line names.
func (ta *testAccount) readFlood(key Principal, n int) {
	ta.t.Helper()
	batch := make([]ActivityEntry, ActivityFlushMax)
	for r := range n {
		ta.cmd(key, nil) // moves the clock
		for i := range batch {
			batch[i] = ta.entry(key, "GET /v1/portfolio/cards/{card_id}", 200, "", ResourceRef{Kind: ResourcePortfolioCard, ID: fmt.Sprintf("flood-%d-%d", r, i)})
		}
		ta.mustOK(key, &RecordKeyActivity{Entries: batch})
	}
}

// linesOf counts the kept lines of key, and finds the one of op.
func (ta *testAccount) linesOf(key Principal, op string) (n int, found bool) {
	for _, e := range ta.a.Activity {
		if e.KeyID == key.KeyID {
			n++
			found = found || e.Op == op
		}
	}
	return n, found
}

// The attack of issue 28: a write key creates a card, then floods its
// activity with reads. Its create, and its refused write, outlive any
// number of its own reads; the reads keep to the key's share.
func TestActivityKeepsAKeysChangesThroughItsReadsFlood(t *testing.T) {
	ta := newTestAccount(t, PlanBase)
	w := ta.addKey(LevelWrite)
	card := ResourceRef{Kind: ResourcePortfolioCard, ID: "c1"}
	ta.mustOK(w, &RecordKeyActivity{Entries: []ActivityEntry{
		ta.entry(w, "POST /v1/portfolio/cards", 201, "", card),
		ta.entry(w, "PATCH /v1/portfolio/cards/{card_id}", 409, CodeStaleVersion, card),
	}})
	ta.readFlood(w, 100) // 6,400 distinct reads
	n, created := ta.linesOf(w, "POST /v1/portfolio/cards")
	_, refused := ta.linesOf(w, "PATCH /v1/portfolio/cards/{card_id}")
	if !created || !refused || n != activityKeyEntriesMax {
		t.Fatalf("after the flood the key holds %d lines; its create kept: %v, its refused write kept: %v", n, created, refused)
	}
	// The reads kept are the newest.
	if last := ta.a.Activity[len(ta.a.Activity)-1]; last.Seq != ta.a.ActivitySeq {
		t.Fatalf("the newest read is not kept: %+v", last)
	}
}

// One key's flood never costs another key a line while that key holds no
// more than its share.
func TestActivityOneKeysFloodLeavesAnotherKeysLines(t *testing.T) {
	ta := newTestAccount(t, PlanBase)
	a := ta.addKey(LevelRead)
	b := ta.addKey(LevelWrite)
	for i := range 30 {
		ta.cmd(b, nil)
		ta.mustOK(b, &RecordKeyActivity{Entries: []ActivityEntry{ta.entry(b, "GET /v1/me", 200, "", ResourceRef{Kind: ResourceSpace, ID: fmt.Sprint("b", i)})}})
	}
	ta.readFlood(a, 100)
	if n, _ := ta.linesOf(b, "GET /v1/me"); n != 30 {
		t.Fatalf("key A's flood left key B %d of its 30 lines", n)
	}
	if n, _ := ta.linesOf(a, "GET /v1/portfolio/cards/{card_id}"); n != activityKeyEntriesMax {
		t.Fatalf("key A holds %d lines", n)
	}
}

// Past 2,000 lines of many keys, the keys that hold the most give up
// lines until the account holds 2,000: a key with few lines keeps them.
func TestActivitySharesLevelManyKeysUnderTheAccountCap(t *testing.T) {
	ta := newTestAccount(t, PlanBase)
	var floods []Principal
	for range 5 {
		floods = append(floods, ta.addKey(LevelRead))
	}
	quiet := ta.addKey(LevelWrite)
	ta.mustOK(quiet, &RecordKeyActivity{Entries: []ActivityEntry{ta.entry(quiet, "DELETE /v1/portfolio/cards/{card_id}", 204, "", ResourceRef{Kind: ResourcePortfolioCard, ID: "c9"})}})
	for _, k := range floods {
		ta.readFlood(k, 8) // 512 lines each
	}
	if len(ta.a.Activity) != activityEntriesMax {
		t.Fatalf("the account holds %d lines", len(ta.a.Activity))
	}
	if n, _ := ta.linesOf(quiet, "DELETE /v1/portfolio/cards/{card_id}"); n != 1 {
		t.Fatal("the quiet key lost its line")
	}
	// Five keys share the 1,999 lines left: 399 or 400 each.
	for _, k := range floods {
		if n, _ := ta.linesOf(k, ""); n < 399 || n > 400 {
			t.Fatalf("a flooding key holds %d lines", n)
		}
	}
}

func TestActivitySharesSplitTheCapEvenly(t *testing.T) {
	for _, c := range []struct {
		held []int
		want []int
	}{
		{[]int{500, 500, 500}, []int{500, 500, 500}},
		{[]int{900, 3}, []int{500, 3}},
		{[]int{500, 500, 500, 500, 500}, []int{400, 400, 400, 400, 400}},
		{[]int{500, 500, 500, 500, 500, 500, 500}, []int{286, 286, 286, 286, 286, 285, 285}},
		{[]int{10, 500, 500, 500, 500, 20}, []int{10, 493, 493, 492, 492, 20}},
	} {
		var keys []string
		held := map[string]int{}
		for i, n := range c.held {
			keys = append(keys, fmt.Sprint("k", i))
			held[keys[i]] = n
		}
		keep := activityShares(keys, held)
		total := 0
		for i, k := range keys {
			total += keep[k]
			if keep[k] != c.want[i] {
				t.Errorf("%v: keep %v, want %v", c.held, keep, c.want)
				break
			}
		}
		if total > activityEntriesMax {
			t.Errorf("%v: %d lines kept", c.held, total)
		}
	}
}

// Lines older than a week go, whoever's, as with RecordActivity.
func TestRecordKeyActivityDropsLinesAWeekOld(t *testing.T) {
	ta := newTestAccount(t, PlanBase)
	k := ta.addKey(LevelWrite)
	other := ta.addKey(LevelRead)
	ta.mustOK(other, &RecordKeyActivity{Entries: []ActivityEntry{ta.entry(other, "GET /v1/me", 200, "", ResourceRef{})}})
	ta.mustOK(k, &RecordKeyActivity{Entries: []ActivityEntry{ta.entry(k, "POST /v1/portfolio/cards", 201, "", ResourceRef{})}})
	ta.cmdAt(ta.at+int64(activityAgeMax)+int64(time.Hour), k, nil)
	ta.mustOK(k, &RecordKeyActivity{Entries: []ActivityEntry{ta.entry(k, "GET /v1/me", 200, "", ResourceRef{})}})
	if len(ta.a.Activity) != 1 || ta.a.Activity[0].Op != "GET /v1/me" || ta.a.Activity[0].KeyID != k.KeyID {
		t.Fatalf("after a week: %+v", ta.a.Activity)
	}
}

// RecordKeyActivity takes the two overflow lines; RecordActivity, which
// older releases apply, only its own.
func TestRecordKeyActivityTakesTheChangesOverflowLine(t *testing.T) {
	ta := newTestAccount(t, PlanBase)
	k := ta.addKey(LevelWrite)
	changes := ta.entry(k, ActivityOtherChanges, 0, "", ResourceRef{})
	others := ta.entry(k, ActivityOther, 0, "", ResourceRef{})
	ta.mustFail(CodeValidation, k, &RecordActivity{Entries: []ActivityEntry{changes}})
	full := make([]ActivityEntry, ActivityFlushMax, ActivityFlushMax+3)
	for i := range full {
		full[i] = ta.entry(k, "GET /v1/me", 200, "", ResourceRef{Kind: ResourceSpace, ID: fmt.Sprint(i)})
	}
	full = append(full, others, changes)
	ta.mustOK(k, &RecordKeyActivity{Entries: full})
	ta.mustFail(CodeValidation, k, &RecordKeyActivity{Entries: append(full, others)})
	ta.mustFail(CodeForbidden, ta.owner, &RecordKeyActivity{Entries: []ActivityEntry{others}})
	if !ActivityIsChange(ActivityOtherChanges, 0) || ActivityIsChange(ActivityOther, 0) || !ActivityIsChange("DELETE /v1/x", 204) || ActivityIsChange("PATCH /v1/x", 409) || ActivityIsChange("GET /v1/me", 200) {
		t.Fatal("ActivityIsChange")
	}
}
