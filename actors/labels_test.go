package actors

import (
	"reflect"
	"testing"
)

// Tests of LabelsQuery and the choice of labels an export holds.

func TestLabelsExportOneLabelPerReference(t *testing.T) {
	ta := newTestAccount(t, PlanExtended)
	card := ta.createCard(ta.owner, addrs[0])
	ta.mustOK(ta.owner, &UpdatePortfolioCard{CardID: card.ID, ExpectedVersion: card.Version, CardFields: CardFields{Name: ptr("Cold storage")}})
	ta.createCard(ta.owner, addrs[1]) // no name: labels nothing
	// The same address bookmarked under another name: the Account card's
	// name wins. An address only bookmarked takes its first bookmark's.
	ta.addBookmark(ta.owner, testFirstSpaceID, addrs[0], nil, CardFields{Name: ptr("Bookmarked cold")})
	ta.addBookmark(ta.owner, testFirstSpaceID, addrs[2], nil, CardFields{Name: ptr("Exchange")})
	second := ta.createSpace(ta.owner, "Watched", SpaceBitcoin)
	ta.addBookmark(ta.owner, second.ID, addrs[2], nil, CardFields{Name: ptr("Exchange again")})
	alt := ta.createSpace(ta.owner, "Alts", SpaceAltcoin)
	ta.addBookmark(ta.owner, alt.ID, altcoinAddrs["litecoin"], ptr("litecoin"), CardFields{Name: ptr("Litecoin")})
	ta.mustOK(ta.owner, notePut(noteTxID(1), "Rent", true, addrs[0]))
	ta.mustOK(ta.owner, notePut(noteTxID(2), "Salary", true, addrs[0]))

	v := ta.mustQuery(ta.ownerCred(), LabelsQuery{}).Body.(LabelsView)
	// A bookmark's label says its Space, so an import puts it back there.
	want := []Label{
		{LabelAddress, addrs[0], "Cold storage", ""},
		{LabelAddress, addrs[2], "Exchange", testFirstSpaceID},
		{LabelTransaction, noteTxID(1), "Rent", ""},
		{LabelTransaction, noteTxID(2), "Salary", ""},
	}
	if got := v.Export(); !reflect.DeepEqual(got, want) {
		t.Fatalf("Export() =\n%v\nwant\n%v", got, want)
	}
	if len(v.Bookmarks) != 3 {
		t.Fatalf("%d Bitcoin bookmark cards, want 3 (the altcoin card is not a Bitcoin address)", len(v.Bookmarks))
	}
	if c, found := v.BookmarkCard(second.ID, addrs[2]); !found || c.Name != "Exchange again" || c.SpaceID != second.ID {
		t.Fatalf("BookmarkCard(second, %s) = %+v, %v", addrs[2], c, found)
	}
	if _, found := v.BookmarkCard(second.ID, addrs[0]); found {
		t.Fatal("a card of another Space was found")
	}
	if sp, found := v.Space(alt.ID); !found || sp.Type != SpaceAltcoin || sp.Name != "Alts" || sp.Version == "" {
		t.Fatalf("Space(alt) = %+v, %v", sp, found)
	}
	if v.PortfolioRoom != 8 {
		t.Fatalf("PortfolioRoom = %d, want 8 (10 Account cards, 2 held)", v.PortfolioRoom)
	}
	if c, found := v.AccountCard(addrs[0]); !found || c.Name != "Cold storage" || c.ID != card.ID || c.Version == card.Version {
		t.Fatalf("AccountCard(%s) = %+v, %v; want the renamed card with its new version", addrs[0], c, found)
	}
	if _, found := v.AccountCard(addrs[2]); found {
		t.Fatal("a bookmarked address is not an Account card")
	}
	if text, found := v.Note(noteTxID(2)); !found || text != "Salary" {
		t.Fatalf("Note = %q, %v", text, found)
	}
	if _, found := v.Note(noteTxID(3)); found {
		t.Fatal("a note that was never written was found")
	}
}

func TestLabelsExportOfAnEmptyAccountIsEmpty(t *testing.T) {
	ta := newTestAccount(t, PlanBase)
	v := ta.mustQuery(ta.ownerCred(), LabelsQuery{}).Body.(LabelsView)
	if got := v.Export(); len(got) != 0 {
		t.Fatalf("Export() of a new account = %v, want nothing", got)
	}
	if v.PortfolioRoom != 10 {
		t.Fatalf("PortfolioRoom = %d, want 10", v.PortfolioRoom)
	}
}

func TestLabelsAreTheOwnersOnly(t *testing.T) {
	ta := newTestAccount(t, PlanBase)
	w := ta.addKey(LevelWrite)
	if res := ta.query(ta.keyCred(w), LabelsQuery{}); res.err == nil || res.err.Code != CodeForbidden {
		t.Fatalf("an API key's LabelsQuery = %+v, want FORBIDDEN", res)
	}
}
