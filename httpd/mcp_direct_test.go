package httpd

import (
	"encoding/json"
	"net"
	"reflect"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"
)

// mcpPost sends one JSON-RPC message to /v1/mcp and returns the status
// and the body.
func (o *ownerTest) mcpPost(bearer, version, body string) (int, []byte) {
	o.t.Helper()
	var req fasthttp.Request
	req.Header.SetMethod("POST")
	req.SetRequestURI(mcpPath)
	req.Header.Set(fasthttp.HeaderAuthorization, "Bearer "+bearer)
	req.Header.Set(fasthttp.HeaderAccept, "application/json, text/event-stream")
	req.Header.SetContentType("application/json")
	if version != "" {
		req.Header.Set("Mcp-Protocol-Version", version)
	}
	req.SetBodyString(body)
	ctx := &fasthttp.RequestCtx{}
	ctx.Init(&req, &net.TCPAddr{IP: net.ParseIP("192.0.2.9"), Port: 40000}, nil)
	o.handler(ctx)
	return ctx.Response.StatusCode(), append([]byte(nil), ctx.Response.Body()...)
}

func toolCall(tool, args string) string {
	return `{"jsonrpc":"2.0","id":"call-1","method":"tools/call","params":{"name":"` + tool + `","arguments":` + args + `}}`
}

// The direct path of tools/call answers exactly as the SDK's transport
// does: the same status and the same JSON for results, tool errors and a
// refused key.
func TestMCPDirectPathAnswersAsTheSDK(t *testing.T) {
	o := newOwnerTest(t)
	write, _ := o.key("write", "writer")
	read, _ := o.key("read", "reader")
	_, _, created := o.send("192.0.2.1", "POST", "/v1/portfolio/cards", write, map[string]any{"address": csvAddrA, "name": "Cold \"<b>\"", "note": "line\nnext"})
	card := created["card"].(map[string]any)["id"].(string)
	forged := read[:len(read)-4] + "zzzz"

	for _, c := range []struct {
		name, key, body string
	}{
		{"me", write, toolCall("me", `{}`)},
		{"me without arguments", read, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"me"}}`},
		{"a card, with quotes and control characters", read, toolCall("get_portfolio_card", `{"card_id":"`+card+`"}`)},
		{"a list", read, toolCall("list_portfolio_cards", `null`)},
		{"NOT_FOUND", read, toolCall("get_portfolio_card", `{"card_id":"nope"}`)},
		{"FORBIDDEN", read, toolCall("create_portfolio_card", `{"body":{"address":"`+csvAddrA+`"}}`)},
		{"VALIDATION from the API", write, toolCall("list_card_transactions", `{"card_id":"`+card+`","limit":1000}`)},
		{"VALIDATION of the arguments", write, toolCall("get_portfolio_card", `{"card":"x"}`)},
		{"STALE_VERSION", write, toolCall("update_portfolio_card", `{"card_id":"`+card+`","body":{"expected_version":"v0","note":"n"}}`)},
		{"a forged key", forged, toolCall("me", `{}`)},
	} {
		o.server.mcp.sdkOnly = true
		sdkStatus, sdkBody := o.mcpPost(c.key, "2025-06-18", c.body)
		o.server.mcp.sdkOnly = false
		directStatus, directBody := o.mcpPost(c.key, "2025-06-18", c.body)
		var sdk, direct any
		if json.Unmarshal(sdkBody, &sdk) != nil || json.Unmarshal(directBody, &direct) != nil {
			t.Fatalf("%s: not JSON:\nSDK    %s\ndirect %s", c.name, sdkBody, directBody)
		}
		if sdkStatus != directStatus || !reflect.DeepEqual(sdk, direct) {
			t.Errorf("%s: the direct path answered otherwise:\nSDK    %d %s\ndirect %d %s", c.name, sdkStatus, sdkBody, directStatus, directBody)
		}
	}
}

// What the direct path takes, and what it leaves to the SDK.
func TestMCPDirectPathTakesOnlyPlainToolCalls(t *testing.T) {
	o := newOwnerTest(t)
	key, _ := o.key("read", "reader")
	for _, c := range []struct {
		version, body string
		taken         bool
	}{
		{"2025-06-18", toolCall("me", `{}`), true},
		{"2025-11-25", `{"jsonrpc":"2.0","id":-1,"method":"tools/call","params":{"name":"me"}}`, true},
		{"", toolCall("me", `{}`), false},           // no version: the SDK picks its default
		{"2026-07-28", toolCall("me", `{}`), false}, // the version moves into _meta
		{"2025-06-18", toolCall("no_such_tool", `{}`), false},
		{"2025-06-18", toolCall("me", `[]`), false},
		{"2025-06-18", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"me","_meta":{"progressToken":1}}}`, false},
		{"2025-06-18", `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"me"}}`, false}, // a notification
		{"2025-06-18", `{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{"name":"me"}}`, false},
		{"2025-06-18", `[` + toolCall("me", `{}`) + `]`, false},
		{"2025-06-18", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, false},
		{"2025-06-18", `{"jsonrpc":"2.0","id":1,"id":2,"method":"tools/call","params":{"name":"me"}}`, false},
		{"2025-06-18", `{"jsonrpc":"2.0","id":1.5,"method":"tools/call","params":{"name":"me"}}`, false},   // the SDK would round it
		{"2025-06-18", `{"jsonrpc":"2.0","id":1e999,"method":"tools/call","params":{"name":"me"}}`, false}, // found by FuzzMCPDirectCall
	} {
		var req fasthttp.Request
		req.Header.SetMethod("POST")
		req.SetRequestURI(mcpPath)
		req.Header.Set(fasthttp.HeaderAuthorization, "Bearer "+key)
		if c.version != "" {
			req.Header.Set("Mcp-Protocol-Version", c.version)
		}
		req.SetBodyString(c.body)
		ctx := &fasthttp.RequestCtx{}
		ctx.Init(&req, &net.TCPAddr{IP: net.ParseIP("192.0.2.9")}, nil)
		if taken := o.server.mcp.direct(ctx); taken != c.taken {
			t.Errorf("%s %s: taken %v, want %v", c.version, c.body, taken, c.taken)
		}
		if c.taken && !strings.Contains(string(ctx.Response.Body()), `"structuredContent"`) {
			t.Errorf("%s: %s", c.body, ctx.Response.Body())
		}
	}
}

func TestAppendQuotedIsJSON(t *testing.T) {
	for _, s := range []string{"", "plain", `"quoted" \ back`, "nl\n tab\t cr\r nul\x00 bell\x07 us\x1f", "ünïcödé ✓ \u2028 </script>"} {
		var back string
		if err := json.Unmarshal(appendQuoted(nil, s), &back); err != nil || back != s {
			t.Errorf("%q: %q %v", s, back, err)
		}
	}
}

// FuzzMCPDirectCall sends arbitrary bodies to the direct path of
// tools/call: it never panics, and a body it takes gets a JSON-RPC answer
// that is valid JSON and echoes the request's id.
func FuzzMCPDirectCall(f *testing.F) {
	for _, seed := range []string{
		toolCall("me", `{}`), toolCall("get_portfolio_card", `{"card_id":"x"}`), toolCall("me", `null`),
		`{"jsonrpc":"2.0","id":1e999,"method":"tools/call","params":{"name":"me"}}`,
		`{"jsonrpc":"2.0","id":"\u0000","method":"tools/call","params":{"name":"list_events","arguments":{"limit":"x"}}}`,
		`{"jsonrpc":"2.0","id":-0,"method":"tools/call","params":{"name":"me","arguments":{"a":1}}}`,
		`[]`, `{`, ``,
	} {
		f.Add(seed)
	}
	o := newOwnerTest(f)
	key, _ := o.key("read", "fuzz")
	f.Fuzz(func(t *testing.T, body string) {
		var req fasthttp.Request
		req.Header.SetMethod("POST")
		req.SetRequestURI(mcpPath)
		req.Header.Set(fasthttp.HeaderAuthorization, "Bearer "+key)
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		req.SetBodyString(body)
		ctx := &fasthttp.RequestCtx{}
		ctx.Init(&req, &net.TCPAddr{IP: net.ParseIP("192.0.2.9")}, nil)
		if !o.server.mcp.direct(ctx) {
			return
		}
		var answer struct {
			ID json.RawMessage `json:"id"`
		}
		if err := json.Unmarshal(ctx.Response.Body(), &answer); err != nil {
			t.Fatalf("%q: the answer is not JSON: %v\n%s", body, err, ctx.Response.Body())
		}
		var sent struct {
			ID json.RawMessage `json:"id"`
		}
		json.Unmarshal([]byte(body), &sent)
		var a, b any
		if json.Unmarshal(answer.ID, &a) != nil || json.Unmarshal(sent.ID, &b) != nil || !reflect.DeepEqual(a, b) {
			t.Fatalf("%q: id %s answered as %s", body, sent.ID, answer.ID)
		}
	})
}
