package system_test

import (
	"fmt"
	"net/http"
	"testing"
)

// GET /owner/v1/activity over real HTTP: an agent's read, change and
// refusal are listed, each filter narrows them (key_id, resource_id,
// changes_only), and a bad filter is 422 VALIDATION with the reason.
func TestOwnerActivityOverHTTP(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	a := s.createAccount(t, "base")
	card := owString(t, owOwnerCard(t, s, a.OwnerSecret, owAddress(900), "Cold"), "id")
	owGrant(t, s, a.OwnerSecret, card, "write")
	writerID, writer := owKey(t, s, a.OwnerSecret, "write", "writer")
	_, reader := owKey(t, s, a.OwnerSecret, "read", "reader")

	expect(t, do(t, "GET", s.URL+"/v1/portfolio/cards/"+card, writer, nil), http.StatusOK, "")
	v := owCardVersion(t, s, a.OwnerSecret, card)
	expect(t, do(t, "PATCH", s.URL+"/v1/portfolio/cards/"+card, writer, map[string]any{"expected_version": v, "name": "Warm"}), http.StatusOK, "")
	expect(t, do(t, "PATCH", s.URL+"/v1/portfolio/cards/"+card, reader, map[string]any{"expected_version": v, "name": "x"}), http.StatusForbidden, "FORBIDDEN")

	lines := func(query string) []string {
		t.Helper()
		r := do(t, "GET", s.URL+"/owner/v1/activity"+query, a.OwnerSecret, nil)
		expect(t, r, http.StatusOK, "")
		var out []string
		for _, e := range r.JSON(t)["entries"].([]any) {
			e := e.(map[string]any)
			out = append(out, fmt.Sprintf("%s %v", e["op"], e["status"]))
		}
		return out
	}
	// Activity is recorded off the request path: wait for the three lines.
	eventually(t, "the three lines", func() error {
		if got := lines(""); len(got) != 3 {
			return fmt.Errorf("lines %v", got)
		}
		return nil
	})
	for query, want := range map[string]int{
		"?changes_only=true":                 1,
		"?changes_only=false":                3,
		"?key_id=" + writerID:                2,
		"?key_id=" + writerID + "&limit=1":   1,
		"?resource_id=" + card:               3,
		"?changes_only=true&key_id=nosuchid": 0,
	} {
		if got := lines(query); len(got) != want {
			t.Errorf("%s: %v, want %d lines", query, got, want)
		}
	}
	if got := lines("?changes_only=true"); len(got) == 1 && got[0] != "PATCH /v1/portfolio/cards/{card_id} 200" {
		t.Errorf("changes only: %v", got)
	}
	for _, bad := range []string{"?changes_only=yes", "?limit=0", "?since=yesterday", "?colour=red"} {
		expect(t, do(t, "GET", s.URL+"/owner/v1/activity"+bad, a.OwnerSecret, nil), http.StatusUnprocessableEntity, "VALIDATION")
	}
	expect(t, do(t, "GET", s.URL+"/owner/v1/activity", writer, nil), http.StatusUnauthorized, "UNAUTHORIZED")
}
