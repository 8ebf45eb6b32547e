package system_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The authorization matrix: every operation of /v1, with a write key and
// a read key, on resources granted write, read and none, and the outcome
// the spec gives each (the answer, or the error code). It runs over REST
// and, unchanged, through MCP (both transports): the MCP tools must be the
// API's authorization exactly. No row changes anything (a write that
// would pass carries a stale version, and is refused as STALE_VERSION
// after its authorization), so every run sees the same state, and a read
// answered over REST and over MCP must be the same JSON.

type authzCase struct {
	name   string
	tool   string
	method string
	path   string            // under /v1, with {param} placeholders
	params map[string]string // path parameters
	query  map[string]string
	body   map[string]any
	write  string // "ok" or the error code, for the write key
	read   string // the same for the read key
}

// authzFixture is an extended account with resources at each grant level.
type authzFixture struct {
	a                      mcpAccount
	cardW, cardR, cardN    map[string]any
	spW, spR, spN, sheetW  string
	bmW, bmR, bmN          map[string]any
	spWVersion, spRVersion string
	hidden                 []string // what no answer may show: IDs and addresses at none
}

func newAuthzFixture(t *testing.T, s *server) authzFixture {
	t.Helper()
	f := authzFixture{a: newMCPAccount(t, s)}
	ow := f.a.OwnerSecret
	owner := func(method, path string, body any, status int) map[string]any {
		t.Helper()
		r := do(t, method, s.URL+"/owner/v1"+path, ow, body)
		expect(t, r, status, "")
		return r.JSON(t)
	}
	card := func(seed, level string) map[string]any {
		c := owner("POST", "/portfolio/cards", map[string]any{"address": ctAddress("authz-" + seed), "name": "card " + seed}, http.StatusCreated)["card"].(map[string]any)
		owner("PUT", "/grants/portfolio/"+c["id"].(string), map[string]any{"level": level}, http.StatusOK)
		return c
	}
	f.cardW, f.cardR, f.cardN = card("w", "write"), card("r", "read"), card("n", "none")
	space := func(name, kind, level string) string {
		rev := owner("GET", "/bookmark-spaces", nil, http.StatusOK)["bookmark_revision"]
		id := owner("POST", "/bookmark-spaces", map[string]any{"expected_bookmark_revision": rev, "name": name, "type": kind}, http.StatusCreated)["space"].(map[string]any)["id"].(string)
		owner("PUT", "/grants/bookmark-spaces/"+id, map[string]any{"level": level}, http.StatusOK)
		return id
	}
	f.spW, f.spR, f.spN, f.sheetW = f.a.space, space("read", "bitcoin", "read"), space("hidden", "bitcoin", "none"), space("ledger", "sheet", "write")
	bookmark := func(space, seed string) map[string]any {
		v := owner("GET", "/bookmark-spaces/"+space, nil, http.StatusOK)["space"].(map[string]any)["version"]
		return owner("POST", "/bookmark-spaces/"+space+"/cards", map[string]any{"expected_space_version": v, "address": ctAddress("authz-bm-" + seed)}, http.StatusCreated)["card"].(map[string]any)
	}
	f.bmW, f.bmR, f.bmN = bookmark(f.spW, "w"), bookmark(f.spR, "r"), bookmark(f.spN, "n")
	f.spWVersion = owner("GET", "/bookmark-spaces/"+f.spW, nil, http.StatusOK)["space"].(map[string]any)["version"].(string)
	f.spRVersion = owner("GET", "/bookmark-spaces/"+f.spR, nil, http.StatusOK)["space"].(map[string]any)["version"].(string)
	f.hidden = []string{f.cardN["id"].(string), f.cardN["address"].(string), f.spN, f.bmN["id"].(string), f.bmN["address"].(string)}
	return f
}

func (f authzFixture) cases() []authzCase {
	id := func(c map[string]any) string { return c["id"].(string) }
	stale := map[string]any{"expected_version": "v1", "note": "stale"}
	const unknownTx = "00000000000000000000000000000000000000000000000000000000000000ab"
	cs := []authzCase{
		{name: "me", tool: "me", method: "GET", path: "/me", write: "ok", read: "ok"},
		{name: "list cards", tool: "list_portfolio_cards", method: "GET", path: "/portfolio/cards", write: "ok", read: "ok"},
		{name: "validate card", tool: "validate_portfolio_card", method: "POST", path: "/portfolio/cards/validate", body: map[string]any{"address": ctAddress("authz-new")}, write: "ok", read: "FORBIDDEN"},
		{name: "create card, stale", tool: "create_portfolio_card", method: "POST", path: "/portfolio/cards", body: map[string]any{"address": f.cardN["address"]}, write: "DUPLICATE_ADDRESS", read: "FORBIDDEN"},
		{name: "list Spaces", tool: "list_spaces", method: "GET", path: "/bookmark-spaces", write: "ok", read: "ok"},
		{name: "create Space, stale", tool: "create_space", method: "POST", path: "/bookmark-spaces", body: map[string]any{"expected_bookmark_revision": "r0", "name": "x", "type": "bitcoin"}, write: "STALE_VERSION", read: "FORBIDDEN"},
		{name: "move none card to write Space", tool: "move_card", method: "POST", path: "/cards/move", body: map[string]any{"source_kind": "portfolio", "source_id": id(f.cardN), "destination_kind": "bookmark", "destination_space_id": f.spW, "expected_source_version": f.cardN["version"], "expected_destination_version": f.spWVersion}, write: "NOT_FOUND", read: "FORBIDDEN"},
		{name: "validate move write card to write Space", tool: "validate_move", method: "POST", path: "/cards/move/validate", body: map[string]any{"source_kind": "portfolio", "source_id": id(f.cardW), "destination_kind": "bookmark", "destination_space_id": f.spW, "expected_source_version": f.cardW["version"], "expected_destination_version": f.spWVersion}, write: "ok", read: "FORBIDDEN"},
		{name: "validate move write card to read Space", tool: "validate_move", method: "POST", path: "/cards/move/validate", body: map[string]any{"source_kind": "portfolio", "source_id": id(f.cardW), "destination_kind": "bookmark", "destination_space_id": f.spR, "expected_source_version": f.cardW["version"], "expected_destination_version": f.spRVersion}, write: "FORBIDDEN", read: "FORBIDDEN"},
		{name: "combined History", tool: "get_history", method: "GET", path: "/history", write: "ok", read: "ok"},
		{name: "History cards", tool: "list_history_cards", method: "GET", path: "/history/cards", write: "ok", read: "ok"},
		{name: "read notes", tool: "read_notes", method: "POST", path: "/history/notes/batch", body: map[string]any{"txids": []string{unknownTx}}, write: "ok", read: "ok"},
		{name: "put note, unknown tx", tool: "put_note", method: "PUT", path: "/history/notes/{txid}", params: map[string]string{"txid": unknownTx}, body: map[string]any{"note": "n"}, write: "NOT_FOUND", read: "FORBIDDEN"},
		{name: "delete note, unknown tx", tool: "delete_note", method: "DELETE", path: "/history/notes/{txid}", params: map[string]string{"txid": unknownTx}, write: "NOT_FOUND", read: "FORBIDDEN"},
		{name: "events", tool: "list_events", method: "GET", path: "/events", write: "ok", read: "ok"},
		{name: "read Sheet", tool: "get_sheet", method: "GET", path: "/bookmark-spaces/{space_id}/sheet", params: map[string]string{"space_id": f.sheetW}, query: map[string]string{"limit": "3"}, write: "ok", read: "ok"},
		{name: "patch Sheet, stale", tool: "patch_sheet", method: "PATCH", path: "/bookmark-spaces/{space_id}/sheet", params: map[string]string{"space_id": f.sheetW}, body: map[string]any{"expected_revision": 99, "rows": []any{map[string]any{"index": 0, "cells": []string{"a", "b", "", "", ""}}}}, write: "STALE_VERSION", read: "FORBIDDEN"},
		{name: "upsert Sheet row, stale", tool: "upsert_sheet_row", method: "PUT", path: "/bookmark-spaces/{space_id}/sheet", params: map[string]string{"space_id": f.sheetW}, body: map[string]any{"expected_revision": 99, "cells": []string{"a", "b", "", "", ""}}, write: "STALE_VERSION", read: "FORBIDDEN"},
		{name: "delete Sheet row, stale", tool: "delete_sheet_row", method: "DELETE", path: "/bookmark-spaces/{space_id}/sheet", params: map[string]string{"space_id": f.sheetW}, body: map[string]any{"expected_revision": 99, "index": 0}, write: "STALE_VERSION", read: "FORBIDDEN"},
		{name: "compact Sheet, stale", tool: "compact_sheet", method: "POST", path: "/bookmark-spaces/{space_id}/sheet", params: map[string]string{"space_id": f.sheetW}, body: map[string]any{"expected_revision": 99}, write: "STALE_VERSION", read: "FORBIDDEN"},
	}
	for _, c := range []struct {
		level      string
		card       map[string]any
		get, write string // outcomes for the write key; the read key reads the same and writes FORBIDDEN
	}{{"write", f.cardW, "ok", "STALE_VERSION"}, {"read", f.cardR, "ok", "FORBIDDEN"}, {"none", f.cardN, "NOT_FOUND", "NOT_FOUND"}} {
		p := map[string]string{"card_id": id(c.card)}
		cs = append(cs,
			authzCase{name: "get card at " + c.level, tool: "get_portfolio_card", method: "GET", path: "/portfolio/cards/{card_id}", params: p, write: c.get, read: c.get},
			authzCase{name: "edit card at " + c.level + ", stale", tool: "update_portfolio_card", method: "PATCH", path: "/portfolio/cards/{card_id}", params: p, body: stale, write: c.write, read: "FORBIDDEN"},
			authzCase{name: "delete card at " + c.level + ", stale", tool: "delete_portfolio_card", method: "DELETE", path: "/portfolio/cards/{card_id}", params: p, body: map[string]any{"expected_version": "v1"}, write: c.write, read: "FORBIDDEN"},
			authzCase{name: "transactions of card at " + c.level, tool: "list_card_transactions", method: "GET", path: "/history/cards/{card_id}/transactions", params: p, query: map[string]string{"limit": "5"}, write: c.get, read: c.get},
		)
	}
	for _, sp := range []struct {
		level, space, version string
		card                  map[string]any
		get, write, validate  string
	}{{"write", f.spW, f.spWVersion, f.bmW, "ok", "STALE_VERSION", "ok"}, {"read", f.spR, f.spRVersion, f.bmR, "ok", "FORBIDDEN", "FORBIDDEN"}, {"none", f.spN, "v1", f.bmN, "NOT_FOUND", "NOT_FOUND", "NOT_FOUND"}} {
		p := map[string]string{"space_id": sp.space}
		pc := map[string]string{"space_id": sp.space, "card_id": id(sp.card)}
		cs = append(cs,
			authzCase{name: "get Space at " + sp.level, tool: "get_space", method: "GET", path: "/bookmark-spaces/{space_id}", params: p, write: sp.get, read: sp.get},
			authzCase{name: "rename Space at " + sp.level + ", stale", tool: "rename_space", method: "PATCH", path: "/bookmark-spaces/{space_id}", params: p, body: map[string]any{"expected_bookmark_revision": "r0", "name": "renamed"}, write: sp.write, read: "FORBIDDEN"},
			authzCase{name: "delete Space at " + sp.level + ", stale", tool: "delete_space", method: "DELETE", path: "/bookmark-spaces/{space_id}", params: p, body: map[string]any{"expected_bookmark_revision": "r0", "expected_version": "v1", "confirm_delete_cards": true}, write: sp.write, read: "FORBIDDEN"},
			authzCase{name: "list cards of Space at " + sp.level, tool: "list_bookmark_cards", method: "GET", path: "/bookmark-spaces/{space_id}/cards", params: p, write: sp.get, read: sp.get},
			authzCase{name: "add card to Space at " + sp.level + ", stale", tool: "create_bookmark_card", method: "POST", path: "/bookmark-spaces/{space_id}/cards", params: p, body: map[string]any{"expected_space_version": "v1", "address": ctAddress("authz-add")}, write: sp.write, read: "FORBIDDEN"},
			authzCase{name: "validate card in Space at " + sp.level, tool: "validate_bookmark_card", method: "POST", path: "/bookmark-spaces/{space_id}/cards/validate", params: p, body: map[string]any{"expected_space_version": sp.version, "address": ctAddress("authz-add")}, write: sp.validate, read: "FORBIDDEN"},
			authzCase{name: "get card in Space at " + sp.level, tool: "get_bookmark_card", method: "GET", path: "/bookmark-spaces/{space_id}/cards/{card_id}", params: pc, write: sp.get, read: sp.get},
			authzCase{name: "edit card in Space at " + sp.level + ", stale", tool: "update_bookmark_card", method: "PATCH", path: "/bookmark-spaces/{space_id}/cards/{card_id}", params: pc, body: stale, write: sp.write, read: "FORBIDDEN"},
			authzCase{name: "delete card in Space at " + sp.level + ", stale", tool: "delete_bookmark_card", method: "DELETE", path: "/bookmark-spaces/{space_id}/cards/{card_id}", params: pc, body: map[string]any{"expected_version": "v1"}, write: sp.write, read: "FORBIDDEN"},
		)
	}
	return cs
}

// authzOutcome is what one key got from one case: "ok" or the code, and
// the answer's JSON.
type authzOutcome struct {
	result string
	body   map[string]any
}

func (c authzCase) rest(t *testing.T, s *server, key string) authzOutcome {
	t.Helper()
	path := c.path
	for k, v := range c.params {
		path = strings.Replace(path, "{"+k+"}", url.PathEscape(v), 1)
	}
	q := url.Values{}
	for k, v := range c.query {
		q.Set(k, v)
	}
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	var body any
	if c.body != nil {
		body = c.body
	}
	r := do(t, c.method, s.URL+"/v1"+path, key, body)
	if r.Status >= 200 && r.Status < 300 {
		return authzOutcome{result: "ok", body: r.JSON(t)}
	}
	return authzOutcome{result: r.Code(t), body: r.JSON(t)}
}

func (c authzCase) mcpArgs() map[string]any {
	args := map[string]any{}
	for k, v := range c.params {
		args[k] = v
	}
	for k, v := range c.query {
		args[k] = v
	}
	if c.body != nil {
		args["body"] = c.body
	}
	return args
}

func TestAuthorizationMatrix(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	f := newAuthzFixture(t, s)
	cases := f.cases()
	tools := map[string]bool{}
	for _, c := range cases {
		tools[c.tool] = true
	}
	if len(tools) != 32 {
		t.Fatalf("the matrix covers %d of the 32 operations", len(tools))
	}
	keys := []struct{ name, key string }{{"write", f.a.write}, {"read", f.a.read}}
	sessions := map[mcpTransport]map[string]*mcp.ClientSession{}
	for _, tr := range mcpTransports {
		sessions[tr] = map[string]*mcp.ClientSession{}
		for _, k := range keys {
			sessions[tr][k.name] = mcpSession(t, s, k.key, tr)
		}
	}
	var report []string
	for _, c := range cases {
		line := fmt.Sprintf("%-46s %-24s", c.name, c.tool)
		for _, k := range keys {
			want := c.write
			if k.name == "read" {
				want = c.read
			}
			rest := c.rest(t, s, k.key)
			if rest.result != want {
				t.Errorf("REST %s with the %s key: %s, want %s (%v)", c.name, k.name, rest.result, want, rest.body)
			}
			f.checkHidden(t, "REST "+c.name, rest.body)
			for _, tr := range mcpTransports {
				got := mcpCall(t, sessions[tr][k.name], c.tool, c.mcpArgs())
				result := got.Code
				if result == "" {
					result = "ok"
				}
				if result != want {
					t.Errorf("MCP (%s) %s with the %s key: %s, want %s (%s)", tr, c.name, k.name, result, want, got.Text)
				}
				if result == "ok" && c.method == "GET" && c.tool != "list_events" && !reflect.DeepEqual(got.Body, rest.body) {
					t.Errorf("MCP (%s) %s with the %s key answered otherwise than REST:\nMCP  %s\nREST %s", tr, c.name, k.name, compact(got.Body), compact(rest.body))
				}
				f.checkHidden(t, fmt.Sprintf("MCP (%s) %s", tr, c.name), got.Body)
			}
			line += fmt.Sprintf(" %s=%-14s", k.name, rest.result)
		}
		report = append(report, line)
	}
	sort.Strings(report)
	t.Logf("%d cases x 2 keys, each over REST, MCP over HTTP and MCP over stdio:\n%s", len(cases), strings.Join(report, "\n"))
}

// checkHidden fails when an answer shows anything at grant none.
func (f authzFixture) checkHidden(t *testing.T, what string, body map[string]any) {
	t.Helper()
	raw, _ := json.Marshal(body)
	for _, h := range f.hidden {
		if strings.Contains(string(raw), h) {
			t.Errorf("%s shows %q, which is at grant none: %s", what, h, raw)
		}
	}
}
