package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func agentDocument(t *testing.T) []byte {
	t.Helper()
	doc, err := os.ReadFile("../httpd/openapi/agent.json")
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// fakeAPI records the requests tools make and answers with reply.
type fakeAPI struct {
	mu    sync.Mutex
	seen  []Request
	reply Reply
	err   error
}

func (f *fakeAPI) call(_ context.Context, _ *auth.TokenInfo, r Request) (Reply, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seen = append(f.seen, r)
	return f.reply, f.err
}

func (f *fakeAPI) last(t *testing.T) Request {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.seen) == 0 {
		t.Fatal("the tool made no API request")
	}
	return f.seen[len(f.seen)-1]
}

// connect serves cfg over in-memory transports and returns a client
// session of the SDK's own client.
func connect(t *testing.T, cfg Config) *mcp.ClientSession {
	t.Helper()
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ct, st := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := s.MCP.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func listTools(t *testing.T, cs *mcp.ClientSession) map[string]*mcp.Tool {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*mcp.Tool{}
	for _, tl := range res.Tools {
		if byName[tl.Name] != nil {
			t.Fatalf("two tools are named %s", tl.Name)
		}
		byName[tl.Name] = tl
	}
	return byName
}

func TestEveryOperationIsAToolOrAResource(t *testing.T) {
	api := &fakeAPI{}
	cs := connect(t, Config{OpenAPI: agentDocument(t), Call: api.call})
	listed := listTools(t, cs)
	if len(listed) != len(tools) {
		t.Fatalf("%d tools listed, %d in the table", len(listed), len(tools))
	}
	for _, tl := range listed {
		if tl.Description == "" || tl.Annotations == nil || tl.Annotations.OpenWorldHint == nil {
			t.Errorf("%s: no description or hints", tl.Name)
		}
		// Each schema stands alone: every $ref resolves inside it.
		for what, schema := range map[string]any{"input": tl.InputSchema, "output": tl.OutputSchema} {
			if schema == nil {
				continue
			}
			raw, _ := json.Marshal(schema)
			var js jsonschema.Schema
			if err := json.Unmarshal(raw, &js); err != nil {
				t.Fatalf("%s %s schema: %v", tl.Name, what, err)
			}
			if _, err := js.Resolve(nil); err != nil {
				t.Errorf("%s %s schema does not resolve: %v", tl.Name, what, err)
			}
			if js.Type != "object" {
				t.Errorf("%s %s schema has type %q at the top", tl.Name, what, js.Type)
			}
		}
	}
	resources, err := cs.ListResources(context.Background(), nil)
	if err != nil || len(resources.Resources) != len(documents) {
		t.Fatalf("resources %v %v", resources, err)
	}
}

func TestNewRefusesADocumentTheToolsDoNotMatch(t *testing.T) {
	var doc map[string]any
	if err := json.Unmarshal(agentDocument(t), &doc); err != nil {
		t.Fatal(err)
	}
	paths := doc["paths"].(map[string]any)
	paths["/extra"] = map[string]any{"get": map[string]any{"operationId": "getExtra", "responses": map[string]any{}}}
	more, _ := json.Marshal(doc)
	if _, err := New(Config{OpenAPI: more}); err == nil || !strings.Contains(err.Error(), "getExtra") {
		t.Fatalf("a new operation without a tool: %v", err)
	}
	delete(paths, "/extra")
	delete(paths, "/events")
	fewer, _ := json.Marshal(doc)
	if _, err := New(Config{OpenAPI: fewer}); err == nil || !strings.Contains(err.Error(), "list_events") {
		t.Fatalf("a tool without its operation: %v", err)
	}

	// A client of a server of another version goes on without them.
	paths["/extra"] = map[string]any{"get": map[string]any{"operationId": "getExtra", "responses": map[string]any{}}}
	other, _ := json.Marshal(doc)
	var told []string
	s, err := New(Config{OpenAPI: other, Mismatch: func(err error) { told = append(told, err.Error()) }})
	if err != nil || len(told) != 2 || !strings.Contains(told[0], "getExtra") || !strings.Contains(told[1], "list_events") {
		t.Fatalf("lenient: %v %q", err, told)
	}
	ct, st := mcp.NewInMemoryTransports()
	if _, err := s.MCP.Connect(context.Background(), st, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if listed := listTools(t, cs); len(listed) != len(tools)-1 || listed["list_events"] != nil {
		t.Fatalf("lenient server lists %d tools", len(listed))
	}
}

func TestHintsFollowTheAPI(t *testing.T) {
	listed := listTools(t, connect(t, Config{OpenAPI: agentDocument(t), Call: (&fakeAPI{}).call}))
	for name, want := range map[string]struct{ readOnly, destructive, idempotent bool }{
		"me":                      {readOnly: true, idempotent: true},
		"validate_portfolio_card": {readOnly: true, idempotent: true},
		"read_notes":              {readOnly: true, idempotent: true},
		"create_portfolio_card":   {},
		"update_portfolio_card":   {destructive: true, idempotent: true},
		"delete_space":            {destructive: true, idempotent: true},
		"compact_sheet":           {idempotent: true},
		"upsert_sheet_row":        {destructive: true, idempotent: true},
	} {
		a := listed[name].Annotations
		if a.ReadOnlyHint != want.readOnly || a.IdempotentHint != want.idempotent {
			t.Errorf("%s: hints %+v, want %+v", name, a, want)
		}
		if !want.readOnly && (a.DestructiveHint == nil || *a.DestructiveHint != want.destructive) {
			t.Errorf("%s: destructive %v, want %v", name, a.DestructiveHint, want.destructive)
		}
	}
}

func TestReadOnlyKeyListsOnlyReadTools(t *testing.T) {
	api := &fakeAPI{reply: Reply{Status: 403, Body: []byte(`{"code":"FORBIDDEN","error":"this key can only read"}`)}}
	cs := connect(t, Config{OpenAPI: agentDocument(t), Call: api.call, ReadOnly: func(context.Context, *auth.TokenInfo) bool { return true }})
	listed := listTools(t, cs)
	for name, tl := range listed {
		if !tl.Annotations.ReadOnlyHint || strings.HasPrefix(name, "validate_") {
			t.Errorf("a read key is offered %s", name)
		}
	}
	if listed["me"] == nil || listed["get_sheet"] == nil || listed["read_notes"] == nil || listed["list_chain_activity"] == nil || len(listed) != 14 {
		t.Fatalf("read tools listed: %d", len(listed))
	}
	// A write tool called anyway goes to the API, which refuses it.
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "create_portfolio_card", Arguments: map[string]any{"body": map[string]any{"address": "x"}}})
	if err != nil || !res.IsError || !strings.HasPrefix(text(res), "FORBIDDEN (HTTP 403)") {
		t.Fatalf("write tool with a read key: %v %+v", err, res)
	}
}

func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func call(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: a protocol error, where tool errors were expected: %v", name, err)
	}
	return res
}

func TestToolCallIsTheAPIRequest(t *testing.T) {
	api := &fakeAPI{reply: Reply{Status: 200, Body: []byte(`{"card":{"id":"c/1","version":"v2"}}`)}}
	cs := connect(t, Config{OpenAPI: agentDocument(t), Call: api.call})

	res := call(t, cs, "update_portfolio_card", map[string]any{"card_id": "c/1 x", "body": map[string]any{"expected_version": "v1", "note": "cold"}})
	got := api.last(t)
	if got.Method != "PATCH" || got.Path != "/portfolio/cards/c%2F1%20x" || string(got.Body) != `{"expected_version":"v1","note":"cold"}` || got.IdempotencyKey != "" {
		t.Fatalf("request %+v %s", got, got.Body)
	}
	if res.IsError || text(res) != `{"card":{"id":"c/1","version":"v2"}}` {
		t.Fatalf("result %+v", res)
	}
	structured, _ := json.Marshal(res.StructuredContent)
	if string(structured) != `{"card":{"id":"c/1","version":"v2"}}` {
		t.Fatalf("structured content %s", structured)
	}

	call(t, cs, "get_sheet", map[string]any{"space_id": "s1", "offset": 100, "limit": "50", "view": "sparse"})
	if got := api.last(t); got.Method != "GET" || got.Path != "/bookmark-spaces/s1/sheet" || got.Query.Encode() != "limit=50&offset=100&view=sparse" || got.Body != nil {
		t.Fatalf("request %+v", got)
	}
	call(t, cs, "get_history", map[string]any{"force_refresh": true})
	if got := api.last(t); got.Query.Get("force_refresh") != "true" {
		t.Fatalf("request %+v", got)
	}
}

func TestCreatesCarryAnIdempotencyKey(t *testing.T) {
	api := &fakeAPI{reply: Reply{Status: 201, Body: []byte(`{"card":{"id":"c1"}}`)}}
	cs := connect(t, Config{OpenAPI: agentDocument(t), Call: api.call})
	args := map[string]any{"body": map[string]any{"address": "bc1q"}}
	call(t, cs, "create_portfolio_card", args)
	first := api.last(t).IdempotencyKey
	call(t, cs, "create_portfolio_card", args)
	second := api.last(t).IdempotencyKey
	if len(first) < 16 || first == second {
		t.Fatalf("each intended create needs a fresh key: %q %q", first, second)
	}
	args["idempotency_key"] = "retry-of-the-first-create"
	call(t, cs, "create_portfolio_card", args)
	if got := api.last(t).IdempotencyKey; got != "retry-of-the-first-create" {
		t.Fatalf("the model's key was not used: %q", got)
	}
}

func TestErrorsAreToolErrorsWithTheSpecCode(t *testing.T) {
	api := &fakeAPI{reply: Reply{Status: 409, Body: []byte(`{"code":"STALE_VERSION","error":"the card changed"}`)}}
	cs := connect(t, Config{OpenAPI: agentDocument(t), Call: api.call})
	res := call(t, cs, "delete_portfolio_card", map[string]any{"card_id": "c1", "body": map[string]any{"expected_version": "v0"}})
	var detail map[string]any
	raw, _ := json.Marshal(res.Meta[ErrorMeta])
	json.Unmarshal(raw, &detail)
	if res.StructuredContent != nil {
		t.Fatalf("an error has structured content, which clients check against the success schema: %v", res.StructuredContent)
	}
	if !res.IsError || detail["code"] != "STALE_VERSION" || detail["error"] != "the card changed" || !strings.Contains(text(res), "retry at most once") {
		t.Fatalf("stale delete: %+v %s", res, raw)
	}
	if _, has := detail["idempotency_key"]; has {
		t.Fatal("a stale version is not retried as is, so no key is offered")
	}

	api.reply = Reply{Status: 429, Body: []byte(`{"code":"RATE_LIMITED","error":"slow down"}`), RetryAfter: "7"}
	res = call(t, cs, "create_space", map[string]any{"body": map[string]any{"name": "n"}})
	if !res.IsError || !strings.Contains(text(res), "wait 7 seconds") || !strings.Contains(text(res), api.last(t).IdempotencyKey) {
		t.Fatalf("rate limited: %s", text(res))
	}

	api.err, api.reply = errors.New("connection refused"), Reply{}
	res = call(t, cs, "me", nil)
	if !res.IsError || !strings.HasPrefix(text(res), "HTTP_ERROR: the request did not complete: connection refused") {
		t.Fatalf("transport failure: %s", text(res))
	}
	api.err, api.reply = nil, Reply{Status: 502, Body: []byte("<html>bad gateway</html>")}
	if res = call(t, cs, "me", nil); !res.IsError || !strings.HasPrefix(text(res), "HTTP_ERROR (HTTP 502)") {
		t.Fatalf("an answer without an error body: %s", text(res))
	}
}

func TestBadArgumentsAreToolErrors(t *testing.T) {
	api := &fakeAPI{reply: Reply{Status: 200, Body: []byte(`{}`)}}
	cs := connect(t, Config{OpenAPI: agentDocument(t), Call: api.call})
	for _, c := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"get_portfolio_card", map[string]any{}, `the argument "card_id" is required`},
		{"get_portfolio_card", map[string]any{"card_id": ""}, `"card_id" must not be empty`},
		{"get_portfolio_card", map[string]any{"card_id": map[string]any{}}, `"card_id": must be a string`},
		{"me", map[string]any{"body": map[string]any{}}, `unknown argument "body"; this tool takes `},
		{"list_events", map[string]any{"cursor": "x"}, `this tool takes since, limit`},
		{"create_space", map[string]any{"idempotency_key": 5}, `"idempotency_key" must be a string`},
	} {
		before := len(api.seen)
		res := call(t, cs, c.tool, c.args)
		if !res.IsError || !strings.HasPrefix(text(res), "VALIDATION: ") || !strings.Contains(text(res), c.want) {
			t.Errorf("%s %v: %s", c.tool, c.args, text(res))
		}
		if len(api.seen) != before {
			t.Errorf("%s %v reached the API", c.tool, c.args)
		}
	}
}

func TestDocumentsAreResources(t *testing.T) {
	api := &fakeAPI{reply: Reply{Status: 200, Body: []byte("# The guide")}}
	cs := connect(t, Config{OpenAPI: agentDocument(t), Call: api.call})
	res, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "addrwatch://docs/sheets"})
	if err != nil || len(res.Contents) != 1 || res.Contents[0].Text != "# The guide" || res.Contents[0].MIMEType != "text/markdown" {
		t.Fatalf("%+v %v", res, err)
	}
	if got := api.last(t); got.Method != "GET" || got.Path != "/docs/sheets" {
		t.Fatalf("request %+v", got)
	}
}
