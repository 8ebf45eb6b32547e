package actors

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// feed polls the change feed for cred.
func (ta *testAccount) feed(cred Credential, q EventsQuery) EventsPage {
	ta.t.Helper()
	return poll[EventsPage](ta, cred, q.FeedCursor, func(c FeedCursor) Query { return EventsQuery{c} })
}

// poll runs the query of a feed from c for cred, 100 a page unless c
// says, and returns its page.
func poll[P any](ta *testAccount, cred Credential, c FeedCursor, query func(FeedCursor) Query) P {
	ta.t.Helper()
	if c.Limit == 0 {
		c.Limit = 100
	}
	return ta.mustQuery(cred, query(c)).Body.(P)
}

func kinds(p EventsPage) []EventKind {
	return each(p.Events, func(e EventView) EventKind { return e.Kind })
}

func TestFeedShowsOwnAndGrantedChangesOnly(t *testing.T) {
	ta := newTestAccount(t, PlanBase)
	w := ta.addKey(LevelWrite)
	r := ta.addKey(LevelRead)
	mine := ta.createCard(w, addrs[0])                                                           // agent card: grant write
	hidden := ta.mustOK(ta.owner, &CreatePortfolioCard{CardID: "owner-card", Address: addrs[1]}) // grant none
	_ = hidden
	// The writer sees its own change; the reader sees it too (the card is
	// granted write, so readable); neither sees the owner's hidden card.
	for _, who := range []Principal{w, r} {
		page := ta.feed(ta.keyCred(who), EventsQuery{})
		if len(page.Events) != 1 || page.Events[0].Kind != EventPortfolioChanged || page.HasMore {
			t.Fatalf("%s sees %+v", who.KeyID, page)
		}
		// The cursor moves past the hidden record all the same.
		if page.NextSeq != ta.a.AuditSeq {
			t.Fatalf("cursor %d, want %d (past records outside the scope)", page.NextSeq, ta.a.AuditSeq)
		}
	}
	// The owner sees everything.
	if n := len(ta.feed(ta.ownerCred(), EventsQuery{}).Events); n != 2 {
		t.Fatalf("owner sees %d events, want 2", n)
	}
	// Events never carry IDs or contents.
	b, _ := json.Marshal(ta.feed(ta.keyCred(r), EventsQuery{}).Events)
	mustNotMention(t, "events", string(b), mine.ID, mine.Address, "owner-card")
}

func TestFeedKeepsOwnSignalsAfterTheGrantIsRemoved(t *testing.T) {
	ta := newTestAccount(t, PlanBase)
	w := ta.addKey(LevelWrite)
	other := ta.addKey(LevelWrite)
	card := ta.createCard(w, addrs[0])
	ta.setGrant(card.ID, LevelNone)
	// w keeps its own create; the other key does not see it any more, but
	// both see the scope change.
	if got := kinds(ta.feed(ta.keyCred(w), EventsQuery{})); len(got) != 2 || got[0] != EventPortfolioChanged || got[1] != EventScopeChanged {
		t.Fatalf("own key sees %v", got)
	}
	if got := kinds(ta.feed(ta.keyCred(other), EventsQuery{})); len(got) != 1 || got[0] != EventScopeChanged {
		t.Fatalf("other key sees %v", got)
	}
}

func TestFeedRemovalsAreGenericSignals(t *testing.T) {
	ta := newTestAccount(t, PlanBase)
	w := ta.addKey(LevelWrite)
	r := ta.addKey(LevelRead)
	agentCard := ta.createCard(w, addrs[0])
	ta.mustOK(w, &DeletePortfolioCard{CardID: agentCard.ID, ExpectedVersion: agentCard.Version})
	// An owner deletion of a card never granted is not shown to agents; of a
	// granted card it is.
	secret := cardOf(t, ta.mustOK(ta.owner, &CreatePortfolioCard{CardID: "c-secret", Address: addrs[1]}))
	shared := cardOf(t, ta.mustOK(ta.owner, &CreatePortfolioCard{CardID: "c-shared", Address: addrs[2]}))
	ta.setGrant(shared.ID, LevelRead)
	shared = cardOf(t, ta.mustQuery(ta.ownerCred(), GetPortfolioCardQuery{CardID: shared.ID}))
	ta.mustOK(ta.owner, &DeletePortfolioCard{CardID: secret.ID, ExpectedVersion: secret.Version})
	ta.mustOK(ta.owner, &DeletePortfolioCard{CardID: shared.ID, ExpectedVersion: shared.Version})
	got := kinds(ta.feed(ta.keyCred(r), EventsQuery{}))
	// The other key's create of a card that is gone now is omitted (the
	// spec allows omitting changes to now-hidden cards); its delete is a
	// generic signal; then the scope change and the owner's delete of the
	// granted card. The owner's delete of the never-granted card is absent.
	want := []EventKind{EventPortfolioChanged, EventScopeChanged, EventPortfolioChanged}
	if len(got) != len(want) {
		t.Fatalf("reader sees %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("reader sees %v, want %v", got, want)
		}
	}
}

func TestFeedPagingAndCursors(t *testing.T) {
	ta := newTestAccount(t, PlanBase)
	w := ta.addKey(LevelWrite)
	for i := range 7 {
		ta.createCard(w, addrs[i])
	}
	cred := ta.keyCred(w)
	var seen []uint64
	q := EventsQuery{FeedCursor{Limit: 3}}
	for range 10 {
		page := ta.feed(cred, q)
		for _, e := range page.Events {
			seen = append(seen, e.Seq)
		}
		if !page.HasMore {
			break
		}
		if len(page.Events) != 3 {
			t.Fatalf("a page with has_more holds %d events, want the limit 3", len(page.Events))
		}
		after := page.NextSeq
		q = EventsQuery{FeedCursor{Limit: 3, AfterSeq: &after}}
	}
	if len(seen) != 7 {
		t.Fatalf("paging saw %d events, want 7: %v", len(seen), seen)
	}
	for i := 1; i < len(seen); i++ {
		if seen[i] <= seen[i-1] {
			t.Fatalf("events out of order or repeated: %v", seen)
		}
	}
	// Polling again from the last cursor returns nothing new.
	last := ta.feed(cred, EventsQuery{})
	end := last.NextSeq
	if page := ta.feed(cred, EventsQuery{FeedCursor{AfterSeq: &end}}); len(page.Events) != 0 || page.HasMore || page.NextSeq != end {
		t.Fatalf("an up-to-date cursor got %+v", page)
	}
	// A cursor from the future is refused.
	future := ta.a.AuditSeq + 5
	wantCode(t, ta.query(cred, EventsQuery{FeedCursor{Limit: 10, AfterSeq: &future}}), CodeValidation)
}

func TestFeedTimeWindows(t *testing.T) {
	ta := newTestAccount(t, PlanBase)
	w := ta.addKey(LevelWrite)
	ta.createCard(w, addrs[0])
	first := ta.at
	ta.at += int64(30 * time.Hour)
	ta.createCard(w, addrs[1])
	// With no since, the feed starts 24 hours ago: only the recent event.
	if n := len(ta.feed(ta.keyCred(w), EventsQuery{}).Events); n != 1 {
		t.Fatalf("default window shows %d events, want 1", n)
	}
	// An RFC 3339 since (parsed by the edge into a time) reaches further.
	since := first - int64(time.Second)
	page := ta.feed(ta.keyCred(w), EventsQuery{FeedCursor{SinceTime: &since}})
	if len(page.Events) != 2 {
		t.Fatalf("since before the first event shows %d, want 2", len(page.Events))
	}
	if _, err := time.Parse(time.RFC3339Nano, page.Events[0].At); err != nil || !strings.HasSuffix(page.Events[0].At, "Z") {
		t.Fatalf("event time %q is not RFC 3339 UTC", page.Events[0].At)
	}
}
