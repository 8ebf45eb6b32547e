package httpd

import (
	"encoding/json"
	"net"
	"reflect"
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

// The direct path of tools/call (package mcphttp) answers exactly as the
// SDK's transport does, in front of the real API: the same status and the
// same JSON for results, tool errors and a refused key.
func TestMCPDirectPathAnswersAsTheSDK(t *testing.T) {
	t.Parallel()
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
		o.server.mcp.SDKOnly = true
		sdkStatus, sdkBody := o.mcpPost(c.key, "2025-06-18", c.body)
		o.server.mcp.SDKOnly = false
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
