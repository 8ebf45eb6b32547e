package main

// The mcp scenario: what auth-reads asks, asked as an agent host does over
// MCP's Streamable HTTP transport. addrwatchd's /v1/mcp is stateless, so
// every POST is a complete tools/call with no session to open first;
// each answer must carry structured content, which only a successful
// tool call has (a tool error is a 200 too, with isError).

// mcpProtocolVersion is the MCP revision the requests say they speak.
const mcpProtocolVersion = "2025-06-18"

// mcpToolCall is the JSON-RPC body of one tools/call without arguments.
func mcpToolCall(tool string) []byte {
	return []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":` + string(appendJSONString(nil, tool)) + `,"arguments":{}}}`)
}

var mcpHeader = []string{"Accept", "application/json, text/event-stream", "MCP-Protocol-Version", mcpProtocolVersion}

func newMCPWorker(e *env, w int) worker {
	a, base := e.account(w), e.target(w)
	call := func(tool string) request {
		return request{op: "POST /v1/mcp tools/call " + tool, method: "POST", url: base + "/v1/mcp", bearer: a.readKey,
			header: mcpHeader, body: mcpToolCall(tool), expect: []byte(`"structuredContent"`)}
	}
	return &readsWorker{i: w, reqs: []request{call("me"), call("list_portfolio_cards")}}
}
