package httpd

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/addrwatch/addrwatch/actors"
)

// Issue 33, item 3: importing the account's own BIP-329 export created its
// bookmark cards as new Account cards. A bookmark's record now says its
// Space, and importing the export changes nothing: the same bytes come
// back out, nothing is proposed, and every card keeps its version.

// roundTripAccount fills an extended account with what an export holds
// and leaves out: Account cards (one unnamed), two Bitcoin Spaces (one
// address in both, one also an Account card), an altcoin Space, notes,
// and hostile names. It returns the Space IDs by name.
func roundTripAccount(t *testing.T, l *labelsTest) map[string]string {
	t.Helper()
	l.mustJSON("POST", "/owner/v1/portfolio/cards", map[string]string{"address": csvAddrA, "name": `"},{"type":"addr","ref":"x`}, http.StatusCreated)
	l.mustJSON("POST", "/owner/v1/portfolio/cards", map[string]string{"address": someAddress(t, 1)}, http.StatusCreated)
	l.mustJSON("POST", "/owner/v1/portfolio/cards", map[string]string{"address": someAddress(t, 4), "name": "Zoë ✓ 🦊"}, http.StatusCreated)
	spaces := map[string]string{}
	for _, sp := range []struct{ name, typ string }{{"<b>Friends</b>", "bitcoin"}, {"Watched", "bitcoin"}, {"Alts", "altcoin"}} {
		rev := l.mustJSON("GET", "/owner/v1/bookmark-spaces", nil, http.StatusOK)["bookmark_revision"]
		created := l.mustJSON("POST", "/owner/v1/bookmark-spaces", map[string]any{"expected_bookmark_revision": rev, "name": sp.name, "type": sp.typ}, http.StatusCreated)
		spaces[sp.name] = created["space"].(map[string]any)["id"].(string)
	}
	bookmark := func(space string, card map[string]any) {
		t.Helper()
		v := l.mustJSON("GET", "/owner/v1/bookmark-spaces/"+space+"/cards", nil, http.StatusOK)["space"].(map[string]any)["version"]
		card["expected_space_version"] = v
		l.mustJSON("POST", "/owner/v1/bookmark-spaces/"+space+"/cards", card, http.StatusCreated)
	}
	bookmark(spaces["<b>Friends</b>"], map[string]any{"address": someAddress(t, 2), "name": `<img src=x onerror=alert(1)>`})
	bookmark(spaces["<b>Friends</b>"], map[string]any{"address": csvAddrA, "name": "bookmarked A"})
	bookmark(spaces["<b>Friends</b>"], map[string]any{"address": someAddress(t, 5)}) // no name
	bookmark(spaces["Watched"], map[string]any{"address": someAddress(t, 2), "name": "Alice again"})
	bookmark(spaces["Watched"], map[string]any{"address": someAddress(t, 3), "name": `Bob "the builder" \ ☃`})
	bookmark(spaces["Alts"], map[string]any{"address": "LT2KVaAy1ppRuxRgrS5RNU3vBsy7RibPeA", "coin_id": "litecoin", "name": "ltc"})
	l.mustJSON("PUT", "/owner/v1/history/notes/"+l.txOf(0), map[string]string{"note": `rent "}{`}, http.StatusOK)
	l.mustJSON("PUT", "/owner/v1/history/notes/"+l.txOf(1), map[string]string{"note": "<script>alert(1)</script>"}, http.StatusOK)
	return spaces
}

// accountState is every card and Space with its version, and the notes,
// as the owner API shows them.
func accountState(t *testing.T, l *labelsTest, spaces map[string]string) string {
	t.Helper()
	state := []any{l.mustJSON("GET", "/owner/v1/portfolio/cards", nil, http.StatusOK), l.mustJSON("GET", "/owner/v1/bookmark-spaces", nil, http.StatusOK)}
	for _, id := range []string{spaces["<b>Friends</b>"], spaces["Watched"], spaces["Alts"]} {
		state = append(state, l.mustJSON("GET", "/owner/v1/bookmark-spaces/"+id+"/cards", nil, http.StatusOK))
	}
	out, err := json.Marshal(state)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

func TestLabelRoundTripOfAFullAccountChangesNothing(t *testing.T) {
	t.Parallel()
	l, store := countedLabelsTest(t, actors.PlanExtended, csvAddr{address: csvAddrA, confirmed: 3})
	spaces := roundTripAccount(t, l)
	first := l.export()
	want := labelFileLine("addr", csvAddrA, `"},{"type":"addr","ref":"x`) +
		labelFileLine("addr", someAddress(t, 4), "Zoë ✓ 🦊") +
		string(appendLabelLine(nil, "addr", someAddress(t, 2), `<img src=x onerror=alert(1)>`, spaces["<b>Friends</b>"])) +
		string(appendLabelLine(nil, "addr", someAddress(t, 3), `Bob "the builder" \ ☃`, spaces["Watched"])) +
		labelFileLine("tx", l.txOf(0), `rent "}{`) +
		labelFileLine("tx", l.txOf(1), "<script>alert(1)</script>")
	if first != want {
		t.Fatalf("the export:\n%s\nwant\n%s", first, want)
	}
	before, proposed := accountState(t, l, spaces), store.proposed.Load()

	dry := l.importDry(first)
	r := l.importFile(first)
	for _, report := range []labelImportReport{dry, r} {
		if report.Unchanged != 6 || report.Records != 6 {
			t.Fatalf("importing the export (dry run %v): %+v", report.DryRun, report)
		}
	}
	if n := store.proposed.Load() - proposed; n != 0 {
		t.Fatalf("importing the export proposed %d commands", n)
	}
	if after := accountState(t, l, spaces); after != before {
		t.Fatalf("importing the export changed the account:\n%s\n%s", before, after)
	}
	if again := l.export(); again != first {
		t.Fatalf("export, import, export: not the same bytes:\n%s\n%s", first, again)
	}
}

// A bookmark's line goes back into its Space: a card deleted since is
// created there again, a renamed one renamed back; a Space gone or of
// another type is reported, and the line creates no Account card.
func TestLabelImportPutsBookmarksBackInTheirSpace(t *testing.T) {
	t.Parallel()
	l, store := countedLabelsTest(t, actors.PlanExtended, csvAddr{address: csvAddrA, confirmed: 3})
	spaces := roundTripAccount(t, l)
	export := l.export()
	friends, watched := spaces["<b>Friends</b>"], spaces["Watched"]
	cards := func(space string) map[string]map[string]any {
		out := map[string]map[string]any{}
		for _, c := range l.mustJSON("GET", "/owner/v1/bookmark-spaces/"+space+"/cards", nil, http.StatusOK)["cards"].([]any) {
			out[c.(map[string]any)["address"].(string)] = c.(map[string]any)
		}
		return out
	}
	bob := cards(watched)[someAddress(t, 3)]
	l.mustJSON("PATCH", "/owner/v1/bookmark-spaces/"+watched+"/cards/"+bob["id"].(string), map[string]any{"expected_version": bob["version"], "name": "renamed"}, http.StatusOK)
	alice := cards(friends)[someAddress(t, 2)]
	l.mustJSON("DELETE", "/owner/v1/bookmark-spaces/"+friends+"/cards/"+alice["id"].(string), map[string]any{"expected_version": alice["version"]}, http.StatusOK)

	proposed := store.proposed.Load()
	if dry := l.importDry(export); !dry.DryRun || dry.Imported != 1 || dry.Changed != 1 || store.proposed.Load() != proposed {
		t.Fatalf("dry run: %+v, %d proposed", dry, store.proposed.Load()-proposed)
	}
	if got := cards(friends)[someAddress(t, 2)]; got != nil {
		t.Fatal("the dry run created the card")
	}
	r := l.importFile(export)
	if r.Imported != 1 || r.Changed != 1 || r.Unchanged != 4 {
		t.Fatalf("import: %+v", r)
	}
	if got := cards(friends)[someAddress(t, 2)]; got == nil || got["name"] != `<img src=x onerror=alert(1)>` {
		t.Fatalf("the deleted bookmark was not created again in its Space: %v", got)
	}
	if got := cards(watched)[someAddress(t, 3)]; got["name"] != `Bob "the builder" \ ☃` {
		t.Fatalf("the renamed bookmark: %v", got)
	}
	for _, c := range l.mustJSON("GET", "/owner/v1/portfolio/cards", nil, http.StatusOK)["cards"].([]any) {
		if a := c.(map[string]any)["address"]; a == someAddress(t, 2) || a == someAddress(t, 3) {
			t.Fatalf("a bookmark line made an Account card: %v", c)
		}
	}
	if again := l.export(); again != export {
		t.Fatalf("after putting them back the export differs:\n%s\n%s", export, again)
	}

	// A Space the account does not hold, an altcoin Space, a tx with a
	// Space, an empty Space: each line is reported, nothing is created.
	file := string(appendLabelLine(nil, "addr", someAddress(t, 7), "x", "no-such-space")) +
		string(appendLabelLine(nil, "addr", someAddress(t, 8), "y", spaces["Alts"])) +
		string(appendLabelLine(nil, "tx", l.txOf(2), "z", friends)) +
		`{"type":"addr","ref":"` + someAddress(t, 9) + `","label":"w","addrwatch_space":""}` + "\n"
	proposed = store.proposed.Load()
	r = l.importFile(file)
	reasons := []string{
		`the line names a Space (addrwatch_space "no-such-space") this account does not hold`,
		"the Space “Alts” is not a Bitcoin Space (its type is altcoin)",
		"addrwatch_space belongs to addr records only",
		"addrwatch_space is empty",
	}
	for i, want := range reasons {
		if res := r.Results[i]; res.Outcome != labelSkipped || !strings.HasPrefix(res.Reason, want) {
			t.Errorf("line %d: %s %q, want skipped %q", i+1, res.Outcome, res.Reason, want)
		}
	}
	if n := store.proposed.Load() - proposed; n != 0 {
		t.Fatalf("refused Space lines proposed %d commands", n)
	}
}

// A Space holds 10 cards: lines past its room are skipped before anything
// is proposed, as an Account card's are past the plan's.
func TestLabelImportIntoAFullSpaceProposesNothingMore(t *testing.T) {
	t.Parallel()
	l, store := countedLabelsTest(t, actors.PlanExtended)
	rev := l.mustJSON("GET", "/owner/v1/bookmark-spaces", nil, http.StatusOK)["bookmark_revision"]
	space := l.mustJSON("POST", "/owner/v1/bookmark-spaces", map[string]any{"expected_bookmark_revision": rev, "name": "S", "type": "bitcoin"}, http.StatusCreated)["space"].(map[string]any)["id"].(string)
	var file strings.Builder
	for i := range 50 {
		file.Write(appendLabelLine(nil, "addr", someAddress(t, 100+i), "card", space))
	}
	proposed := store.proposed.Load()
	r := l.importFile(file.String())
	if r.Imported != 10 || r.Skipped != 40 || !strings.HasPrefix(r.Results[49].Reason, "the Space is full") {
		t.Fatalf("import into a Space: %+v", r.Results[49])
	}
	if n := store.proposed.Load() - proposed; n != 10 {
		t.Fatalf("%d commands for 10 cards the Space had room for", n)
	}
}
