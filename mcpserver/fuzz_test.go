package mcpserver

import (
	"encoding/json"
	"net/url"
	"os"
	"strings"
	"testing"
)

// FuzzToolArguments feeds arbitrary arguments to every operation's
// request builder: it never panics, and a request it builds stays on its
// operation's route (a parameter cannot add a path segment, a query or a
// fragment) with a body that is the JSON given.
func FuzzToolArguments(f *testing.F) {
	doc, err := os.ReadFile("../httpd/openapi/agent.json")
	if err != nil {
		f.Fatal(err)
	}
	ops, _, err := parseDocument(doc)
	if err != nil {
		f.Fatal(err)
	}
	for _, seed := range []string{
		`{}`, `null`, `[]`, `"x"`, `{"card_id":"a/b?c#d"}`, `{"space_id":"..","body":{"expected_revision":1}}`,
		`{"txid":"%2F","idempotency_key":"k"}`, `{"limit":1e400,"offset":-1}`, `{"force_refresh":true}`, `{"body":`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, args string) {
		for _, op := range ops {
			r, err := op.request(json.RawMessage(args))
			if err != nil {
				continue
			}
			segments := strings.Count(op.path, "/")
			if strings.Count(r.Path, "/") != segments || strings.ContainsAny(r.Path, "?#") {
				t.Fatalf("%s with %s: path %q leaves the route %s", op.id, args, r.Path, op.path)
			}
			if _, err := url.ParseRequestURI("/v1" + r.Path); err != nil {
				t.Fatalf("%s with %s: path %q: %v", op.id, args, r.Path, err)
			}
			if r.Body != nil && !json.Valid(r.Body) {
				t.Fatalf("%s with %s: body %q is not JSON", op.id, args, r.Body)
			}
		}
	})
}
