package system_test

import (
	"net/http"
	"testing"
)

// A card PATCH that names no field to change is refused with 422, and the
// card's version stays, so no other client's version goes stale for
// nothing (issue 17: real clients sent such PATCHes and bumped versions).
func TestCardPatchWithoutAFieldIsRefused(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	e := spSetup(t, s, "base", "write")
	e.grantCard(t, spID(spOwnerPortfolioCard(t, e, owAddress(990))), "write")
	owner := e.owner()
	r := owner.do(t, "GET", "/portfolio/cards", nil)
	card := r.JSON(t)["cards"].([]any)[0].(map[string]any)
	bookmark := owner.addCard(t, e.first, map[string]any{"address": owAddress(991)})
	for _, tc := range []struct{ what, path, version string }{
		{"Account card", "/portfolio/cards/" + spID(card), spStr(card, "version")},
		{"bookmark card", "/bookmark-spaces/" + e.first + "/cards/" + spID(bookmark), spStr(bookmark, "version")},
	} {
		r := e.agent(e.write).do(t, "PATCH", tc.path, map[string]any{"expected_version": tc.version})
		expect(t, r, http.StatusUnprocessableEntity, "VALIDATION")
		after := e.agent(e.write).do(t, "GET", tc.path, nil)
		expect(t, after, http.StatusOK, "")
		if got := spStr(spObject(t, after.JSON(t), "card"), "version"); got != tc.version {
			t.Fatalf("%s: the refused PATCH moved the version from %s to %s", tc.what, tc.version, got)
		}
		// With a field it applies, on the same version.
		expect(t, e.agent(e.write).do(t, "PATCH", tc.path, map[string]any{"expected_version": tc.version, "note": "n"}), http.StatusOK, "")
	}
}
