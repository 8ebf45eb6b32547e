package actors

import "testing"

// TestAccountSummaryCountsWhatTheAccountHolds: the owner's summary counts
// everything the account holds, hidden cards included, against the
// plan's limits, and keys by capability; an agent is refused.
func TestAccountSummaryCountsWhatTheAccountHolds(t *testing.T) {
	f := newSheetFixture(t) // extended: the first Space (bitcoin) and a Sheet Space; keys w and r
	f.createCard(f.w, addrs[0])
	f.createCard(f.owner, addrs[1]) // grant none: hidden from the keys, counted all the same
	f.mustOK(f.w, f.put("one", "btc", "", "", ""))
	f.mustOK(f.w, f.put("two", "btc", "", "", ""))
	f.mustOK(f.w, notePut(noteTxID(1), "rent", true, addrs[0]))
	f.mustOK(f.w, &CreateBookmarkCard{CardID: "card-b", SpaceID: testFirstSpaceID, ExpectedSpaceVersion: f.spaceVersion(testFirstSpaceID), Address: addrs[2]})

	got := bodyAs[AccountSummaryView](t, f.mustQuery(f.ownerCred(), AccountSummaryQuery{}))
	want := AccountSummaryView{
		Plan:           PlanExtended,
		PortfolioCards: UsageView{Used: 2, Limit: 10},
		BookmarkSpaces: UsageView{Used: 2, Limit: 10},
		BookmarkCards:  1,
		SheetRows:      2,
		Notes:          1,
		ReadKeys:       1,
		WriteKeys:      1,
		Keys:           UsageView{Used: 2, Limit: keysMax},
	}
	if got != want {
		t.Fatalf("summary %+v, want %+v", got, want)
	}

	wantCode(t, f.query(f.keyCred(f.w), AccountSummaryQuery{}), CodeForbidden)
}
