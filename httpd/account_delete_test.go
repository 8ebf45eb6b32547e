package httpd

import (
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/httpd/edge"
)

// DELETE /owner/v1/account needs the current password, as a password
// change does: an owner secret or a session alone, stolen or left open,
// cannot delete the account. Without it the answer is 422; a wrong one
// is refused as POST /owner/v1/password refuses it, and earns the same
// back-off.
func TestDeleteAccountNeedsTheCurrentPassword(t *testing.T) {
	t.Parallel()
	o := newOwnerTest(t)
	secret := o.account.OwnerSecret
	const ip = "203.0.113.40"
	alive := func(when string) {
		t.Helper()
		if status, _, m := o.send("192.0.2.1", "GET", "/owner/v1/account", secret, nil); status != fasthttp.StatusOK {
			t.Fatalf("the account is gone %s: %d %v", when, status, m)
		}
	}
	for _, body := range []any{map[string]any{"confirm": true}, map[string]any{"confirm": true, "current_password": nil}} {
		status, _, m := o.send(ip, "DELETE", "/owner/v1/account", secret, body)
		if status != fasthttp.StatusUnprocessableEntity || m["code"] != "VALIDATION" || m["error"] != `field "current_password" is required` {
			t.Fatalf("%v: %d %v", body, status, m)
		}
		alive("without the password")
	}
	if status, _, m := o.send(ip, "DELETE", "/owner/v1/account", secret, map[string]any{"current_password": o.password}); status != fasthttp.StatusUnprocessableEntity || m["code"] != "VALIDATION" {
		t.Fatalf("without confirm: %d %v", status, m)
	}

	// A wrong password: the password change's answer, and its back-off.
	wantStatus, _, want := o.send("198.51.100.9", "POST", "/owner/v1/password", secret, map[string]any{"current_password": "not the password", "new_password": "another password"})
	for i := range edge.ClientBackoff.Free - 1 {
		status, retry, m := o.send(ip, "DELETE", "/owner/v1/account", secret, map[string]any{"confirm": true, "current_password": "not the password"})
		if status != wantStatus || retry != 0 || m["code"] != want["code"] || m["error"] != want["error"] {
			t.Fatalf("wrong password %d: %d %v, want %d %v", i+1, status, m, wantStatus, want)
		}
	}
	alive("after wrong passwords")
	o.send(ip, "DELETE", "/owner/v1/account", secret, map[string]any{"confirm": true, "current_password": "not the password"})
	status, retry, m := o.send(ip, "DELETE", "/owner/v1/account", secret, map[string]any{"confirm": true, "current_password": o.password})
	if status != fasthttp.StatusTooManyRequests || retry < 1 || m["code"] != "RATE_LIMITED" {
		t.Fatalf("past %d wrong passwords the client is not held back: %d Retry-After %d %v", edge.ClientBackoff.Free, status, retry, m)
	}
	alive("in back-off")

	// From another client, once the account's own short back-off (2 s at
	// most) has passed, the right password deletes the account.
	o.clock.advance(edge.AccountBackoff.Max)
	status, _, m = o.send("198.51.100.10", "DELETE", "/owner/v1/account", secret, map[string]any{"confirm": true, "current_password": o.password})
	if status != fasthttp.StatusNoContent {
		t.Fatalf("with the password: %d %v", status, m)
	}
	if status, _, _ := o.send("192.0.2.1", "GET", "/owner/v1/account", secret, nil); status != fasthttp.StatusUnauthorized {
		t.Fatalf("the account survived: %d", status)
	}
}
