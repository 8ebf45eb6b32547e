package system_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"reflect"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The MCP server from the Go SDK's client, over Streamable HTTP and over
// stdio: the tools are the API's operations, their results the API's JSON,
// their errors the API's codes.

// mcpAccount is an extended account with a write key, a read key and a
// first Space the owner granted write.
type mcpAccount struct {
	account
	write, read string
	space       string
}

func newMCPAccount(t *testing.T, s *server) mcpAccount {
	t.Helper()
	a := mcpAccount{account: s.createAccount(t, "extended")}
	a.write, a.read = s.createKey(t, a.account, "write"), s.createKey(t, a.account, "read")
	r := do(t, "GET", s.URL+"/owner/v1/bookmark-spaces", a.OwnerSecret, nil)
	expect(t, r, http.StatusOK, "")
	a.space = r.JSON(t)["spaces"].([]any)[0].(map[string]any)["id"].(string)
	expect(t, do(t, "PUT", s.URL+"/owner/v1/grants/bookmark-spaces/"+a.space, a.OwnerSecret, map[string]any{"level": "write"}), http.StatusOK, "")
	return a
}

func TestMCPServesTheAgentAPI(t *testing.T) {
	t.Parallel()
	eachMCPTransport(t, func(t *testing.T, s *server, tr mcpTransport, a mcpAccount) {
		w := mcpSession(t, s, a.write, tr)
		rd := mcpSession(t, s, a.read, tr)

		tools := toolNames(t, w)
		if len(tools) != 33 {
			t.Fatalf("a write key is offered %d tools, want 33 (one per operation)", len(tools))
		}
		readTools := toolNames(t, rd)
		if len(readTools) != 14 || readTools["me"] == nil || readTools["create_portfolio_card"] != nil || readTools["validate_move"] != nil {
			t.Fatalf("a read key is offered %d tools", len(readTools))
		}

		// me is /v1/me, the same JSON.
		me := mustCall(t, w, "me", nil)
		rest := do(t, "GET", s.URL+"/v1/me", a.write, nil).JSON(t)
		if !reflect.DeepEqual(me, rest) || me["capability"] != "write" {
			t.Fatalf("me over MCP %v, /v1/me %v", me, rest)
		}

		// A card created through MCP is the API's card.
		addr := ctAddress("mcp-" + string(tr))
		card := mustCall(t, w, "create_portfolio_card", map[string]any{"body": map[string]any{"address": addr, "name": "Cold <b>storage</b>"}})["card"].(map[string]any)
		if card["effective_access"] != "write" || card["name"] != "Cold <b>storage</b>" {
			t.Fatalf("created %v", card)
		}
		list := mustCall(t, w, "list_portfolio_cards", nil)
		if restList := do(t, "GET", s.URL+"/v1/portfolio/cards", a.write, nil).JSON(t); !reflect.DeepEqual(list, restList) {
			t.Fatalf("list over MCP %v, over REST %v", list, restList)
		}
		if dup := mcpCall(t, w, "create_portfolio_card", map[string]any{"body": map[string]any{"address": addr}}); dup.Code != "DUPLICATE_ADDRESS" {
			t.Fatalf("duplicate create: %s", dup.Text)
		}
		if stale := mcpCall(t, w, "update_portfolio_card", map[string]any{"card_id": card["id"], "body": map[string]any{"expected_version": "v0", "note": "x"}}); stale.Code != "STALE_VERSION" || !strings.Contains(stale.Text, "retry at most once") {
			t.Fatalf("stale edit: %s", stale.Text)
		}
		edited := mustCall(t, w, "update_portfolio_card", map[string]any{"card_id": card["id"], "body": map[string]any{"expected_version": card["version"], "note": "edited over MCP"}})
		if edited["card"].(map[string]any)["note"] != "edited over MCP" {
			t.Fatalf("edit: %v", edited)
		}

		// A read key: a write tool called anyway is refused by the API.
		if r := mcpCall(t, rd, "create_portfolio_card", map[string]any{"body": map[string]any{"address": ctAddress("mcp-read")}}); r.Code != "FORBIDDEN" {
			t.Fatalf("a read key's create: %s", r.Text)
		}

		// A Sheet Space, and a row upserted into it.
		spaces := mustCall(t, w, "list_spaces", nil)
		sheet := mustCall(t, w, "create_space", map[string]any{"body": map[string]any{"expected_bookmark_revision": spaces["bookmark_revision"], "name": "Ledger", "type": "sheet"}})["space"].(map[string]any)
		got := mustCall(t, w, "get_sheet", map[string]any{"space_id": sheet["id"], "limit": 5})
		put := mustCall(t, w, "upsert_sheet_row", map[string]any{"space_id": sheet["id"], "body": map[string]any{"expected_revision": got["revision"], "cells": []string{addr, "bitcoin", "", "", "from MCP"}}})
		if put["created"] != true || put["index"] != float64(0) {
			t.Fatalf("upsert: %v", put)
		}
		row := do(t, "GET", s.URL+"/v1/bookmark-spaces/"+sheet["id"].(string)+"/sheet?address="+addr, a.read, nil).JSON(t)
		if rows := row["rows"].([]any); len(rows) != 1 {
			t.Fatalf("the upserted row over REST: %v", row)
		}
		if bad := mcpCall(t, w, "get_sheet", map[string]any{"space_id": sheet["id"], "limit": 500}); bad.Code != "VALIDATION" {
			t.Fatalf("a limit the API refuses: %s", bad.Text)
		}
		if bad := mcpCall(t, w, "get_sheet", map[string]any{"space": sheet["id"]}); bad.Code != "VALIDATION" || !strings.Contains(bad.Text, `unknown argument "space"`) {
			t.Fatalf("an unknown argument: %s", bad.Text)
		}

		// The documents are resources, the served text.
		doc, err := w.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "addrwatch://docs/agent-api"})
		if err != nil || len(doc.Contents) != 1 || doc.Contents[0].Text != string(do(t, "GET", s.URL+"/v1/docs", "", nil).Body) {
			t.Fatalf("the guide as a resource: %v", err)
		}
	})
}

// A key the server refuses gets no MCP service: 401 over HTTP, and the
// stdio server stops at start saying why, without printing the key.
func TestMCPRefusesABadKey(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	const bad = "awk.nobody.nokey.notasecret"
	if _, err := mcpConnect(s, bad, mcpHTTP); err == nil || !strings.Contains(err.Error(), "Unauthorized") {
		t.Fatalf("HTTP with a bad key: %v", err)
	}
	r := do(t, "POST", s.URL+"/v1/mcp", "", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	expect(t, r, http.StatusUnauthorized, "UNAUTHORIZED")

	cmd := exec.Command(cliBinary(t), "mcp")
	cmd.Env = append(os.Environ(), "ADDRWATCH_URL="+s.URL, "ADDRWATCH_API_KEY="+bad)
	cmd.Stdin = strings.NewReader("")
	out, err := cmd.CombinedOutput()
	if code := exitCodeOf(err); code != 1 || !strings.Contains(string(out), "the server refused ADDRWATCH_API_KEY") || strings.Contains(string(out), "notasecret") {
		t.Fatalf("stdio with a bad key: exit %d\n%s", code, out)
	}
	cmd = exec.Command(cliBinary(t), "mcp")
	cmd.Env = append(os.Environ(), "ADDRWATCH_URL=", "ADDRWATCH_API_KEY=")
	out, err = cmd.CombinedOutput()
	if code := exitCodeOf(err); code != 2 || !strings.Contains(string(out), "ADDRWATCH_URL") {
		t.Fatalf("stdio without its environment: exit %d\n%s", code, out)
	}
}

func exitCodeOf(err error) int {
	if err == nil {
		return 0
	}
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	return -1
}

// The HTTP transport is stateless and answers JSON: any node can take any
// request, so GET (a server stream) is refused as the transport allows.
func TestMCPOverHTTPIsStateless(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	a := newMCPAccount(t, s)
	call := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"me","arguments":{}}}`
	r := do(t, "POST", s.URL+"/v1/mcp", a.read, call, "Accept", "application/json, text/event-stream", "MCP-Protocol-Version", "2025-06-18")
	if r.Status != http.StatusOK || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("a tool call without initialize: %d %s %s", r.Status, r.Header, r.Body)
	}
	var answer struct {
		Result struct {
			StructuredContent map[string]any `json:"structuredContent"`
		} `json:"result"`
	}
	if err := json.Unmarshal(r.Body, &answer); err != nil || answer.Result.StructuredContent["capability"] != "read" {
		t.Fatalf("answer %s", r.Body)
	}
	r = do(t, "GET", s.URL+"/v1/mcp", a.read, nil, "Accept", "text/event-stream")
	expect(t, r, http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED")
	if allow := r.Header.Get("Allow"); !strings.Contains(allow, "POST") || strings.Contains(allow, "GET") {
		t.Fatalf("Allow: %q", allow)
	}
	expect(t, do(t, "POST", s.URL+"/v1/mcp", a.read, call), http.StatusBadRequest, "BAD_REQUEST") // no Accept
	expect(t, do(t, "POST", s.URL+"/v1/mcp", a.read, []byte(call), "Content-Type", "text/plain", "Accept", "application/json, text/event-stream"), http.StatusUnprocessableEntity, "VALIDATION")
}
