package actors

import (
	"testing"
	"time"
)

// chainFeed polls the chain-event feed for cred (limit 100 unless set).
func (ta *testAccount) chainFeed(cred Credential, q FeedCursor) ChainActivityPage {
	ta.t.Helper()
	return poll[ChainActivityPage](ta, cred, q, func(c FeedCursor) Query { return ChainActivityQuery{c} })
}

// cardsOf lists the card of each event of the page, in order.
func cardsOf(p ChainActivityPage) []string {
	return each(p.Events, func(e ChainEventView) string { return e.CardID })
}

// The feed lists only the events of cards the key can read now: a card
// at grant none is left out, a grant removed hides its events at once
// (and a grant given back shows them again), a bitcoin Space's card
// follows its Space's grant, and a deleted card's events are nobody's.
func TestTheChainFeedShowsReadableCardsOnly(t *testing.T) {
	ta := newTestAccount(t, PlanExtended)
	reader := ta.addKey(LevelRead)
	shown := ta.createCard(ta.owner, addrs[0])
	hidden := ta.createCard(ta.owner, addrs[1])
	ta.setGrant(shown.ID, LevelRead)
	space := ta.a.Spaces[0]
	ta.mustOK(ta.owner, &CreateBookmarkCard{CardID: "b1", SpaceID: space.ID, ExpectedSpaceVersion: versionString(space.Version), Address: addrs[2]})
	for _, a := range addrs[:3] {
		ta.observeChain(a, 900)
		ta.observeChain(a, 900, mempoolTx("a1", 1000))
	}
	if got := cardsOf(ta.chainFeed(ta.keyCred(reader), FeedCursor{})); len(got) != 1 || got[0] != shown.ID {
		t.Fatalf("the reader sees the events of %v, want only %s", got, shown.ID)
	}
	if got := cardsOf(ta.chainFeed(ta.ownerCred(), FeedCursor{})); len(got) != 3 || got[1] != hidden.ID {
		t.Fatalf("the owner sees the events of %v, want all three cards", got)
	}

	ta.mustOK(ta.owner, &SetGrant{Resource: ResourceSpace, ID: space.ID, Level: LevelRead})
	page := ta.chainFeed(ta.keyCred(reader), FeedCursor{})
	if got := cardsOf(page); len(got) != 2 || got[1] != "b1" || page.Events[1].SpaceID != space.ID {
		t.Fatalf("with the Space granted the reader sees %v", got)
	}

	ta.setGrant(shown.ID, LevelNone)
	if got := cardsOf(ta.chainFeed(ta.keyCred(reader), FeedCursor{})); len(got) != 1 || got[0] != "b1" {
		t.Fatalf("right after the grant was removed the reader sees %v", got)
	}
	ta.setGrant(shown.ID, LevelRead)
	if got := cardsOf(ta.chainFeed(ta.keyCred(reader), FeedCursor{})); len(got) != 2 {
		t.Fatalf("with the grant given back the reader sees %v", got)
	}

	ta.mustOK(ta.owner, &DeletePortfolioCard{CardID: shown.ID, ExpectedVersion: versionString(ta.card(shown.ID).Version)})
	if got := cardsOf(ta.chainFeed(ta.ownerCred(), FeedCursor{})); len(got) != 2 || got[0] != hidden.ID {
		t.Fatalf("after the card was deleted the owner sees %v", got)
	}
}

// The feed pages by the /events rules: at most limit events, has_more
// while more wait, a cursor that passes events the key cannot see and
// never repeats one, a cursor from the future refused, 24 hours back
// without since, and since a time further.
func TestTheChainFeedPagesByTheEventsRules(t *testing.T) {
	ta := newTestAccount(t, PlanExtended)
	reader := ta.addKey(LevelRead)
	shown := ta.createCard(ta.owner, addrs[0])
	ta.createCard(ta.owner, addrs[1]) // hidden
	ta.setGrant(shown.ID, LevelRead)
	ta.observeChain(addrs[0], 900)
	ta.observeChain(addrs[1], 900)
	start := ta.at
	for i, id := range []string{"a1", "a2", "a3", "a4", "a5"} {
		ta.observeChain(addrs[0], 900, mempoolTx(id, int64(i+1)))
		ta.observeChain(addrs[1], 900, mempoolTx(id, int64(i+1)))
	}
	cred := ta.keyCred(reader)
	var seen []string
	q := FeedCursor{Limit: 2}
	for range 10 {
		page := ta.chainFeed(cred, q)
		for _, e := range page.Events {
			seen = append(seen, e.TxID[:2])
		}
		if !page.HasMore {
			// The last page's cursor is past the hidden card's last event.
			if page.NextSeq != ta.a.ChainEventSeq {
				t.Errorf("the last cursor %d, want %d", page.NextSeq, ta.a.ChainEventSeq)
			}
			break
		}
		if len(page.Events) != 2 {
			t.Fatalf("a page with has_more holds %d events", len(page.Events))
		}
		after := page.NextSeq
		q = FeedCursor{Limit: 2, AfterSeq: &after}
	}
	if len(seen) != 5 || seen[0] != "a1" || seen[4] != "a5" {
		t.Fatalf("paging saw %v", seen)
	}
	end := ta.a.ChainEventSeq
	if page := ta.chainFeed(cred, FeedCursor{AfterSeq: &end}); len(page.Events) != 0 || page.HasMore || page.NextSeq != end {
		t.Errorf("an up-to-date cursor got %+v", page)
	}
	future := end + 1
	wantCode(t, ta.query(cred, ChainActivityQuery{FeedCursor{Limit: 10, AfterSeq: &future}}), CodeValidation)

	// A day later the default window is empty; a since before the events
	// shows them all, with RFC 3339 times.
	ta.at += int64(25 * time.Hour)
	if page := ta.chainFeed(cred, FeedCursor{}); len(page.Events) != 0 || page.NextSeq != end {
		t.Errorf("a day later the default window shows %d events, cursor %d", len(page.Events), page.NextSeq)
	}
	since := start
	page := ta.chainFeed(cred, FeedCursor{SinceTime: &since})
	if len(page.Events) != 5 {
		t.Fatalf("since before the events shows %d", len(page.Events))
	}
	if at, err := time.Parse(time.RFC3339Nano, page.Events[0].At); err != nil || at.UnixNano() <= start {
		t.Errorf("at %q", page.Events[0].At)
	}
	if e := page.Events[0]; e.ID != ChainEventID(shown.ID, hashN("a1"), ChainTxSeen, 1) || e.Kind != ChainTxSeen || e.AmountSat != 1 || e.Address != addrs[0] {
		t.Errorf("the first event as the feed shows it: %+v", e)
	}
}
