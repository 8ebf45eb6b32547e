package system_test

import (
	"net/http"
	"strings"
	"testing"
)

// Deleting the account in a real browser: the form asks for the login and
// the current password; a wrong password is refused with the reason and
// deletes nothing, the right one deletes the account and ends the session.
func TestSiteDeletesTheAccountInABrowser(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	const login = "delete.owner"
	o := siteSetUp(t, s, login)
	b := newBrowser(t)
	siteSignIn(t, b, o, login)

	b.open(s.URL + "/settings")
	b.submit(`a[href="/settings/delete"]`)
	b.assertUsable("the delete form")
	b.fill("Type "+login+" to confirm", login)
	b.fill("Current password", "not the password")
	if status := b.submit(`form[action="/settings/delete"] button[type=submit]`); status != http.StatusUnauthorized {
		t.Fatalf("a wrong password: status %d", status)
	}
	b.expectConsoleError("status of 401")
	if p := b.text("p.problem"); p != "The current password is wrong. Nothing was deleted." {
		t.Fatalf("a wrong password reads %q", p)
	}
	expect(t, do(t, "GET", s.URL+"/owner/v1/account", o.OwnerSecret, nil), http.StatusOK, "")

	b.fill("Type "+login+" to confirm", login)
	b.fill("Current password", o.Password)
	if status := b.submit(`form[action="/settings/delete"] button[type=submit]`); status != http.StatusOK || !strings.Contains(b.text(".notice"), "The account and everything in it are deleted") {
		t.Fatalf("with the password: status %d, %q", status, b.text("body"))
	}
	expect(t, do(t, "GET", s.URL+"/owner/v1/account", o.OwnerSecret, nil), http.StatusUnauthorized, "UNAUTHORIZED")
	b.assertNoConsoleErrors()
}
