package httpd

import (
	"testing"

	"github.com/valyala/fasthttp"
)

// A connection's memo knows the bearer it parsed last, never whether it
// is good: a key revoked between two requests of one keep-alive
// connection is refused on the very next one, and a key's kept answer is
// gone with it.
func TestARevokedKeyIsRefusedOnTheNextRequestOfItsConnection(t *testing.T) {
	t.Parallel()
	o := newOwnerTest(t)
	key, id := o.key("read", "agent")
	const agent = "192.0.2.7"
	for _, path := range []string{"/v1/me", "/v1/portfolio/cards", "/v1/me"} {
		if status, _, m := o.send(agent, "GET", path, key, nil); status != fasthttp.StatusOK {
			t.Fatalf("%s: %d %v", path, status, m)
		}
	}
	if status, _, m := o.send("192.0.2.1", "DELETE", "/owner/v1/keys/"+id, o.account.OwnerSecret, nil); status != fasthttp.StatusNoContent {
		t.Fatalf("revoke: %d %v", status, m)
	}
	for _, path := range []string{"/v1/me", "/v1/portfolio/cards"} {
		if status, _, _ := o.send(agent, "GET", path, key, nil); status != fasthttp.StatusUnauthorized {
			t.Fatalf("%s after the revoke: %d", path, status)
		}
	}
}

// Each request of a connection is its bearer's, whatever the one before
// it sent: other keys, a forged secret for a key just used, a credential
// of the other API, none.
func TestEachRequestOfAConnectionIsItsOwnBearers(t *testing.T) {
	t.Parallel()
	o := newOwnerTest(t)
	reader, readerID := o.key("read", "reader")
	writer, writerID := o.key("write", "writer")
	forged := reader[:len(reader)-4] + "zzzz"
	const client = "192.0.2.7"
	for i, step := range []struct {
		bearer string
		status int
		keyID  string
	}{
		{reader, 200, readerID},
		{reader, 200, readerID},
		{writer, 200, writerID},
		{reader, 200, readerID},
		{forged, 401, ""},
		{reader, 200, readerID},
		{o.account.OwnerSecret, 401, ""},
		{"", 401, ""},
		{writer, 200, writerID},
		{forged, 401, ""},
	} {
		status, _, m := o.send(client, "GET", "/v1/me", step.bearer, nil)
		if status != step.status || step.keyID != "" && m["key_id"] != step.keyID {
			t.Fatalf("request %d: %d %v, want %d as key %q", i, status, m, step.status, step.keyID)
		}
	}
}
