package site

import (
	"net/url"
	"strings"
	"testing"

	"github.com/addrwatch/addrwatch/actors"
)

// activityTestNames are the names the owner sees now: an Account card, a
// bookmark card in a Space, and the Space.
var activityTestNames = activityNames{
	accountCards:  map[string]string{"acct1": "Cold"},
	bookmarkCards: map[string]string{"bk1": "Bob"},
	spaces:        map[string]string{"sp1": "Friends"},
}

// plainWords are e's words without the isolates around names.
func plainWords(e actors.ActivityEntry) string {
	return strings.NewReplacer("\u2068", "", "\u2069", "").Replace(activityWords(e, activityTestNames))
}

// A name is isolated from the sentence around it, so a right-to-left
// name cannot reorder it; an empty name is said as such.
func TestActivityWordsIsolateNames(t *testing.T) {
	names := activityNames{accountCards: map[string]string{"a": "כספת", "b": ""}}
	e := actors.ActivityEntry{Op: "GET /v1/portfolio/cards/{card_id}", Resource: actors.ResourceRef{Kind: actors.ResourcePortfolioCard, ID: "a"}, Status: 200}
	if got := activityWords(e, names); got != "read Account card “\u2068כספת\u2069”" {
		t.Fatalf("%q", got)
	}
	e.Resource.ID = "b"
	if got := activityWords(e, names); got != "read Account card (no name)" {
		t.Fatalf("%q", got)
	}
}

// Every route of the Agent API, as the log keeps it, said in the owner's
// words: what it did, and the same request refused. The list of routes
// is the router's (httpd's TestActivityWordsCoverEveryAgentRoute checks
// it against activityPhrases), so a route added without words fails there
// and a phrase whose words change fails here.
func TestActivityWordsSayWhatEachRouteDid(t *testing.T) {
	bookmark := actors.ResourceRef{Kind: actors.ResourceBookmarkCard, ID: "bk1", SpaceID: "sp1"}
	account := actors.ResourceRef{Kind: actors.ResourcePortfolioCard, ID: "acct1"}
	space := actors.ResourceRef{Kind: actors.ResourceSpace, ID: "sp1"}
	note := actors.ResourceRef{Kind: actors.ResourceNote, ID: "0123456789abcdef0123456789abcdef"}
	history := actors.ResourceRef{Kind: actors.ResourceBookmarkCard, ID: "acct1"} // a History path names no Space
	cases := []struct {
		op  string
		ref actors.ResourceRef
		did string
		try string // refused with 403 FORBIDDEN
	}{
		{"GET /v1/me", actors.ResourceRef{}, "read its own access", "was refused: read its own access (403 FORBIDDEN)"},
		{"GET /v1/portfolio/cards", actors.ResourceRef{}, "listed the Account cards", "was refused: list the Account cards (403 FORBIDDEN)"},
		{"POST /v1/portfolio/cards", actors.ResourceRef{}, "added an Account card", "was refused: add an Account card (403 FORBIDDEN)"},
		{"POST /v1/portfolio/cards/validate", actors.ResourceRef{}, "checked an Account card before adding it", "was refused: check an Account card before adding it (403 FORBIDDEN)"},
		{"GET /v1/portfolio/cards/{card_id}", account, "read Account card “Cold”", "was refused: read Account card “Cold” (403 FORBIDDEN)"},
		{"PATCH /v1/portfolio/cards/{card_id}", account, "changed Account card “Cold”", "was refused: change Account card “Cold” (403 FORBIDDEN)"},
		{"DELETE /v1/portfolio/cards/{card_id}", account, "deleted Account card “Cold”", "was refused: delete Account card “Cold” (403 FORBIDDEN)"},
		{"GET /v1/bookmark-spaces", actors.ResourceRef{}, "listed the Spaces", "was refused: list the Spaces (403 FORBIDDEN)"},
		{"POST /v1/bookmark-spaces", actors.ResourceRef{}, "made a Space", "was refused: make a Space (403 FORBIDDEN)"},
		{"GET /v1/bookmark-spaces/{space_id}", space, "read Space “Friends”", "was refused: read Space “Friends” (403 FORBIDDEN)"},
		{"PATCH /v1/bookmark-spaces/{space_id}", space, "changed Space “Friends”", "was refused: change Space “Friends” (403 FORBIDDEN)"},
		{"DELETE /v1/bookmark-spaces/{space_id}", space, "deleted Space “Friends”", "was refused: delete Space “Friends” (403 FORBIDDEN)"},
		{"GET /v1/bookmark-spaces/{space_id}/cards", space, "listed the cards of Space “Friends”", "was refused: list the cards of Space “Friends” (403 FORBIDDEN)"},
		{"POST /v1/bookmark-spaces/{space_id}/cards", space, "added a card to Space “Friends”", "was refused: add a card to Space “Friends” (403 FORBIDDEN)"},
		{"POST /v1/bookmark-spaces/{space_id}/cards/validate", space, "checked a card before adding it to Space “Friends”", "was refused: check a card before adding it to Space “Friends” (403 FORBIDDEN)"},
		{"GET /v1/bookmark-spaces/{space_id}/cards/{card_id}", bookmark, "read card “Bob” in Space “Friends”", "was refused: read card “Bob” in Space “Friends” (403 FORBIDDEN)"},
		{"PATCH /v1/bookmark-spaces/{space_id}/cards/{card_id}", bookmark, "changed card “Bob” in Space “Friends”", "was refused: change card “Bob” in Space “Friends” (403 FORBIDDEN)"},
		{"DELETE /v1/bookmark-spaces/{space_id}/cards/{card_id}", bookmark, "deleted card “Bob” from Space “Friends”", "was refused: delete card “Bob” from Space “Friends” (403 FORBIDDEN)"},
		{"GET /v1/bookmark-spaces/{space_id}/sheet", space, "read the Sheet of Space “Friends”", "was refused: read the Sheet of Space “Friends” (403 FORBIDDEN)"},
		{"PATCH /v1/bookmark-spaces/{space_id}/sheet", space, "changed cells of the Sheet of Space “Friends”", "was refused: change cells of the Sheet of Space “Friends” (403 FORBIDDEN)"},
		{"PUT /v1/bookmark-spaces/{space_id}/sheet", space, "added a row to the Sheet of Space “Friends”", "was refused: add a row to the Sheet of Space “Friends” (403 FORBIDDEN)"},
		{"DELETE /v1/bookmark-spaces/{space_id}/sheet", space, "deleted a row of the Sheet of Space “Friends”", "was refused: delete a row of the Sheet of Space “Friends” (403 FORBIDDEN)"},
		{"POST /v1/bookmark-spaces/{space_id}/sheet", space, "compacted the Sheet of Space “Friends”", "was refused: compact the Sheet of Space “Friends” (403 FORBIDDEN)"},
		{"POST /v1/cards/move", actors.ResourceRef{}, "moved a card", "was refused: move a card (403 FORBIDDEN)"},
		{"POST /v1/cards/move/validate", actors.ResourceRef{}, "checked a move of a card", "was refused: check a move of a card (403 FORBIDDEN)"},
		{"GET /v1/history", actors.ResourceRef{}, "read the combined History", "was refused: read the combined History (403 FORBIDDEN)"},
		{"GET /v1/history/cards", actors.ResourceRef{}, "listed the cards with a History", "was refused: list the cards with a History (403 FORBIDDEN)"},
		{"GET /v1/history/cards/{card_id}/transactions", history, "read the History of Account card “Cold”", "was refused: read the History of Account card “Cold” (403 FORBIDDEN)"},
		{"POST /v1/history/notes/batch", actors.ResourceRef{}, "read notes of transactions", "was refused: read notes of transactions (403 FORBIDDEN)"},
		{"PUT /v1/history/notes/{txid}", note, "saved a note on transaction 01234567…89abcdef", "was refused: save a note on transaction 01234567…89abcdef (403 FORBIDDEN)"},
		{"DELETE /v1/history/notes/{txid}", note, "deleted the note on transaction 01234567…89abcdef", "was refused: delete the note on transaction 01234567…89abcdef (403 FORBIDDEN)"},
		{"GET /v1/history/activity", actors.ResourceRef{}, "read the chain activity of its cards", "was refused: read the chain activity of its cards (403 FORBIDDEN)"},
		{"GET /v1/events", actors.ResourceRef{}, "read the change feed", "was refused: read the change feed (403 FORBIDDEN)"},
	}
	covered := map[string]bool{}
	for _, tc := range cases {
		covered[tc.op] = true
		e := actors.ActivityEntry{Op: tc.op, Resource: tc.ref, Status: 200, Count: 1}
		if got := plainWords(e); got != tc.did {
			t.Errorf("%s answered 200: %q, want %q", tc.op, got, tc.did)
		}
		e.Status, e.Code = 403, actors.CodeForbidden
		if got := plainWords(e); got != tc.try {
			t.Errorf("%s refused: %q, want %q", tc.op, got, tc.try)
		}
	}
	// The table above covers every phrase there is.
	for op := range activityPhrases {
		if !covered[op] {
			t.Errorf("%s has words the test does not check: add it to the table", op)
		}
	}
}

// What is gone is said as gone, never as an error or an ID: a card or
// Space deleted or moved since, and the delete itself names what it
// deleted without a name. The log's own lines have words too, and a
// route without any (a newer server's) is said as its request.
func TestActivityWordsForWhatIsGoneAndTheLogsOwnLines(t *testing.T) {
	goneCard := actors.ResourceRef{Kind: actors.ResourceBookmarkCard, ID: "gone", SpaceID: "sp1"}
	goneSpace := actors.ResourceRef{Kind: actors.ResourceSpace, ID: "gone"}
	for _, tc := range []struct {
		e    actors.ActivityEntry
		want string
	}{
		{actors.ActivityEntry{Op: "PATCH /v1/bookmark-spaces/{space_id}/cards/{card_id}", Resource: goneCard, Status: 200}, "changed a card since deleted or moved in Space “Friends”"},
		{actors.ActivityEntry{Op: "DELETE /v1/bookmark-spaces/{space_id}/cards/{card_id}", Resource: goneCard, Status: 200}, "deleted a card from Space “Friends”"},
		{actors.ActivityEntry{Op: "DELETE /v1/bookmark-spaces/{space_id}/cards/{card_id}", Resource: goneCard, Status: 409, Code: actors.CodeStaleVersion},
			"was refused: delete a card since deleted or moved from Space “Friends” (409 STALE_VERSION)"},
		{actors.ActivityEntry{Op: "GET /v1/bookmark-spaces/{space_id}", Resource: goneSpace, Status: 200}, "read a Space since deleted"},
		{actors.ActivityEntry{Op: "DELETE /v1/bookmark-spaces/{space_id}", Resource: goneSpace, Status: 200}, "deleted a Space"},
		{actors.ActivityEntry{Op: actors.ActivityUnknown, Status: 404, Code: actors.CodeNotFound}, "asked for cards, Spaces or notes that do not exist (404 NOT_FOUND)"},
		{actors.ActivityEntry{Op: actors.ActivityOther}, "made other requests, counted together"},
		{actors.ActivityEntry{Op: actors.ActivityOtherChanges}, "made other changes, counted together"},
		{actors.ActivityEntry{Op: "GET /v1/some/new/route", Status: 200}, "asked GET /v1/some/new/route"},
	} {
		if got := plainWords(tc.e); got != tc.want {
			t.Errorf("%s %d: %q, want %q", tc.e.Op, tc.e.Status, got, tc.want)
		}
	}
}

// The link to older entries keeps the filter, the changes-only box
// included, and drops a filter that was not applied.
func TestActivityOlderLinkKeepsTheFilter(t *testing.T) {
	d := activityData{Key: "k1", Resource: "c1", Since: "2026-11-26T09:30", Changes: true}
	link := activityOlderLink(d, 42, true)
	q, err := url.ParseQuery(strings.TrimPrefix(link, "/activity?"))
	if err != nil || q.Get("before") != "42" || q.Get("key") != "k1" || q.Get("resource") != "c1" || q.Get("since") != "2026-11-26T09:30" || q.Get("changes") != "1" || q.Has("until") {
		t.Fatalf("the older link %q", link)
	}
	if link := activityOlderLink(d, 42, false); link != "/activity?before=42" {
		t.Fatalf("an unapplied filter's older link %q", link)
	}
}
