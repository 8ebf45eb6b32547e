package httpd

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/addrwatch/addrwatch/actors"
	"github.com/addrwatch/addrwatch/chain"
	"github.com/addrwatch/addrwatch/httpd/views"
)

// searchFixture is two cards and five transactions: t1 pays card 0,
// t2 moves money from card 0 to card 1 (a txid that touches both), t3
// spends from card 1, t4 pays card 1 and is unconfirmed, t5 pays card 0
// with the largest amount.
func searchFixture() ([]actors.HistoryCardView, []searchedCard) {
	cards := []actors.HistoryCardView{{ID: "c0", Address: csvAddrA, Name: "Zero"}, {ID: "c1", Address: csvAddrB, Name: "One"}}
	day := func(d int) time.Time { return time.Date(2026, 3, d, 12, 0, 0, 0, time.UTC) }
	tx := func(id string, d int, height int64, in, out []chain.TxIO) chain.Tx {
		t := chain.Tx{TxID: strings.Repeat(id, 32), Inputs: in, Outputs: out}
		if d > 0 {
			t.Confirmed, t.BlockTime, t.BlockHeight = true, day(d), height
		}
		return t
	}
	other := "bc1qsomeoneelsexxxxxxxxxxxxxxxxxxxxxxxxxx"
	t1 := tx("a1", 1, 100, []chain.TxIO{{Address: other, Value: 1000}}, []chain.TxIO{{Address: csvAddrA, Value: 1000}})
	t2 := tx("b2", 2, 101, []chain.TxIO{{Address: csvAddrA, Value: 700}}, []chain.TxIO{{Address: csvAddrB, Value: 600}})
	t3 := tx("c3", 3, 102, []chain.TxIO{{Address: csvAddrB, Value: 300}}, []chain.TxIO{{Address: other, Value: 250}})
	t4 := tx("d4", 0, 0, []chain.TxIO{{Address: other, Value: 50}}, []chain.TxIO{{Address: csvAddrB, Value: 50}})
	t5 := tx("e5", 4, 103, []chain.TxIO{{Address: other, Value: 9000}}, []chain.TxIO{{Address: csvAddrA, Value: 9000}})
	return cards, []searchedCard{
		{pages: [][]chain.Tx{{t5, t2}, {t1}}},
		{pages: [][]chain.Tx{{t4, t3, t2}}},
	}
}

// searchIDs runs a search of the fixture and returns the first two
// characters of each txid of the page, the amounts, and the count.
func searchIDs(t *testing.T, q views.HistoryQuery, notes map[string]string, offset, limit int) ([]string, []int64, int) {
	t.Helper()
	cards, read := searchFixture()
	entries := mergeSearched(cards, read)
	if len(entries) != 5 {
		t.Fatalf("%d entries, want 5 (t2 once)", len(entries))
	}
	if q.Sort == "" {
		q.Sort = views.SortNewest
	}
	page, matched := searchEntries(entries, notes, filterFor(q, cards), q.Sort, offset, limit)
	var ids []string
	var amounts []int64
	for _, m := range page {
		ids, amounts = append(ids, m.entry.tx.TxID[:2]), append(amounts, m.amount)
	}
	return ids, amounts, matched
}

func date(s string) *time.Time {
	t, _ := time.Parse(time.DateOnly, s)
	return &t
}

func TestHistorySearchSortsEveryWay(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		sort views.HistorySort
		want []string
	}{
		{views.SortNewest, []string{"d4", "e5", "c3", "b2", "a1"}},
		{views.SortOldest, []string{"a1", "b2", "c3", "e5", "d4"}},
		// Amounts over both cards: e5 +9000, a1 +1000, d4 +50, b2 -100
		// (700 out of card 0, 600 into card 1), c3 -300.
		{views.SortLargest, []string{"e5", "a1", "d4", "b2", "c3"}},
		{views.SortSmallest, []string{"c3", "b2", "d4", "a1", "e5"}},
	} {
		ids, _, n := searchIDs(t, views.HistoryQuery{Sort: c.sort}, nil, 0, 25)
		if n != 5 || !slices.Equal(ids, c.want) {
			t.Errorf("%s: %v (%d), want %v", c.sort, ids, n, c.want)
		}
	}
}

func TestHistorySearchATxidOfTwoCards(t *testing.T) {
	t.Parallel()
	ids, amounts, n := searchIDs(t, views.HistoryQuery{}, nil, 0, 25)
	if n != 5 || ids[3] != "b2" || amounts[3] != -100 {
		t.Fatalf("every card: %v %v", ids, amounts)
	}
	// Kept by either card, with that card's own part.
	ids, amounts, _ = searchIDs(t, views.HistoryQuery{Card: "c0"}, nil, 0, 25)
	if !slices.Equal(ids, []string{"e5", "b2", "a1"}) || amounts[1] != -700 {
		t.Fatalf("card 0: %v %v", ids, amounts)
	}
	ids, amounts, _ = searchIDs(t, views.HistoryQuery{Card: "c1"}, nil, 0, 25)
	if !slices.Equal(ids, []string{"d4", "c3", "b2"}) || amounts[2] != 600 {
		t.Fatalf("card 1: %v %v", ids, amounts)
	}
	// So the direction follows the card kept: sent by card 0, received by 1.
	if ids, _, _ = searchIDs(t, views.HistoryQuery{Card: "c1", Direction: views.DirectionReceived}, nil, 0, 25); !slices.Equal(ids, []string{"d4", "b2"}) {
		t.Fatalf("received by card 1: %v", ids)
	}
	if ids, _, _ = searchIDs(t, views.HistoryQuery{Card: "c0", Direction: views.DirectionSent}, nil, 0, 25); !slices.Equal(ids, []string{"b2"}) {
		t.Fatalf("sent by card 0: %v", ids)
	}
	if ids, _, n = searchIDs(t, views.HistoryQuery{Card: "nope"}, nil, 0, 25); n != 0 || ids != nil {
		t.Fatalf("an unknown card: %v", ids)
	}
}

func TestHistorySearchFindsTxidAddressOrNote(t *testing.T) {
	t.Parallel()
	notes := map[string]string{strings.Repeat("c3", 32): "Rent for MARCH"}
	for _, c := range []struct {
		text string
		want []string
	}{
		{"B2B2", []string{"b2"}},                          // part of a txid, any case
		{"someoneelse", []string{"d4", "e5", "c3", "a1"}}, // an address in it
		{strings.ToUpper(csvAddrB[:12]), []string{"d4", "c3", "b2"}},
		{"march", []string{"c3"}}, // a note, any case
		{"nowhere", nil},
	} {
		ids, _, _ := searchIDs(t, views.HistoryQuery{Text: c.text}, notes, 0, 25)
		if !slices.Equal(ids, c.want) {
			t.Errorf("search %q: %v, want %v", c.text, ids, c.want)
		}
	}
}

func TestHistorySearchDateBounds(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		from, to string
		want     []string
	}{
		{"2026-03-02", "2026-03-03", []string{"c3", "b2"}}, // both bounds, whole days, no unconfirmed
		{"2026-03-03", "", []string{"e5", "c3"}},
		{"", "2026-03-01", []string{"a1"}},
		{"2026-03-05", "2026-03-09", nil},
	} {
		q := views.HistoryQuery{}
		if c.from != "" {
			q.From = date(c.from)
		}
		if c.to != "" {
			q.To = date(c.to)
		}
		if ids, _, _ := searchIDs(t, q, nil, 0, 25); !slices.Equal(ids, c.want) {
			t.Errorf("from %q to %q: %v, want %v", c.from, c.to, ids, c.want)
		}
	}
}

func TestHistorySearchPages(t *testing.T) {
	t.Parallel()
	ids, _, n := searchIDs(t, views.HistoryQuery{}, nil, 0, 2)
	if n != 5 || !slices.Equal(ids, []string{"d4", "e5"}) {
		t.Fatalf("first page: %v of %d", ids, n)
	}
	if ids, _, n = searchIDs(t, views.HistoryQuery{}, nil, 4, 2); n != 5 || !slices.Equal(ids, []string{"a1"}) {
		t.Fatalf("last page: %v of %d", ids, n)
	}
	if ids, _, n = searchIDs(t, views.HistoryQuery{}, nil, 5, 2); n != 5 || ids != nil {
		t.Fatalf("past the end: %v of %d", ids, n)
	}
	if ids, _, n = searchIDs(t, views.HistoryQuery{Text: "nowhere"}, nil, 0, 2); n != 0 || ids != nil {
		t.Fatalf("nothing matches: %v of %d", ids, n)
	}
}

func TestContainsFold(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		s, sub string
		want   bool
	}{
		{"1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa", "a1zp", true},
		{"1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa", "", true},
		{"abc", "abcd", false},
		{"", "a", false},
		{"xxabab", "abab", true},
	} {
		if got := containsFold(c.s, c.sub); got != c.want {
			t.Errorf("containsFold(%q, %q) = %v", c.s, c.sub, got)
		}
	}
}
