package mcphttp

import (
	"encoding/json"
	"net"
	"reflect"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"
)

func toolCall(tool, args string) string {
	return `{"jsonrpc":"2.0","id":"call-1","method":"tools/call","params":{"name":"` + tool + `","arguments":` + args + `}}`
}

// The direct path of tools/call answers exactly as the SDK's transport
// does: the same status and the same JSON for results, tool errors and a
// refused key. (httpd's tests do the same in front of the real API.)
func TestDirectPathAnswersAsTheSDK(t *testing.T) {
	e := newFakeEndpoint(t)
	for _, c := range []struct {
		name, key, body string
	}{
		{"me", "reader", toolCall("me", `{}`)},
		{"me without arguments", "reader", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"me"}}`},
		{"a card, with quotes and control characters", "reader", toolCall("get_portfolio_card", `{"card_id":"card1"}`)},
		{"a list", "reader", toolCall("list_portfolio_cards", `null`)},
		{"NOT_FOUND", "reader", toolCall("get_portfolio_card", `{"card_id":"nope"}`)},
		{"FORBIDDEN", "reader", toolCall("create_portfolio_card", `{"body":{"address":"x"}}`)},
		{"VALIDATION of the arguments", "reader", toolCall("get_portfolio_card", `{"card":"x"}`)},
		{"a forged key", "forged", toolCall("me", `{}`)},
	} {
		e.SDKOnly = true
		sdkStatus, sdkBody := post(e, c.key, "2025-06-18", "", c.body)
		e.SDKOnly = false
		directStatus, directBody := post(e, c.key, "2025-06-18", "", c.body)
		var sdk, direct any
		if json.Unmarshal(sdkBody, &sdk) != nil || json.Unmarshal(directBody, &direct) != nil {
			t.Fatalf("%s: not JSON:\nSDK    %s\ndirect %s", c.name, sdkBody, directBody)
		}
		if sdkStatus != directStatus || !reflect.DeepEqual(sdk, direct) {
			t.Errorf("%s: the direct path answered otherwise:\nSDK    %d %s\ndirect %d %s", c.name, sdkStatus, sdkBody, directStatus, directBody)
		}
	}
}

// A foreign Origin is refused before anything else, a request's own origin
// and none are served, and the head rules answer in the API's shape.
func TestServeRefusesBeforeTheTools(t *testing.T) {
	e := newFakeEndpoint(t)
	for _, c := range []struct {
		name, key, origin string
		want              int
		code              string
	}{
		{"no Origin", "reader", "", 200, ""},
		{"our own origin", "reader", "http://addrwatch.example", 200, ""},
		{"another site", "reader", "http://evil.example", 403, "FORBIDDEN"},
		{"another site without a key", "", "http://evil.example", 403, "FORBIDDEN"},
		{"no key", "", "", 401, "UNAUTHORIZED"},
	} {
		status, body := post(e, c.key, "2025-06-18", c.origin, toolCall("me", `{}`))
		var m map[string]any
		json.Unmarshal(body, &m)
		if status != c.want || (c.code != "" && m["code"] != c.code) {
			t.Errorf("%s: %d %s, want %d %s", c.name, status, body, c.want, c.code)
		}
	}
}

// What the direct path takes, and what it leaves to the SDK.
func TestMCPDirectPathTakesOnlyPlainToolCalls(t *testing.T) {
	e := newFakeEndpoint(t)
	key := "reader"
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
		req.SetRequestURI("/v1/mcp")
		req.Header.Set(fasthttp.HeaderAuthorization, "Bearer "+key)
		if c.version != "" {
			req.Header.Set("Mcp-Protocol-Version", c.version)
		}
		req.SetBodyString(c.body)
		ctx := &fasthttp.RequestCtx{}
		ctx.Init(&req, &net.TCPAddr{IP: net.ParseIP("192.0.2.9")}, nil)
		if taken := e.direct(ctx); taken != c.taken {
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
	e := newFakeEndpoint(f)
	key := "fuzz"
	f.Fuzz(func(t *testing.T, body string) {
		var req fasthttp.Request
		req.Header.SetMethod("POST")
		req.SetRequestURI("/v1/mcp")
		req.Header.Set(fasthttp.HeaderAuthorization, "Bearer "+key)
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		req.SetBodyString(body)
		ctx := &fasthttp.RequestCtx{}
		ctx.Init(&req, &net.TCPAddr{IP: net.ParseIP("192.0.2.9")}, nil)
		if !e.direct(ctx) {
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
