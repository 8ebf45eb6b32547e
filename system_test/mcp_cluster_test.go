package system_test

import (
	"encoding/json"
	"net/http"
	"testing"
)

// MCP through a follower: /v1/mcp keeps no session, so a follower passes
// each POST to the leader like any other request, and a tool call's write
// lands in the replicated state.
func TestMCPThroughAFollower(t *testing.T) {
	t.Parallel()
	nodes := startCluster(t, 3)
	leader, followers := leaderAndFollowers(t, nodes)
	f := followers[0]
	a := newMCPAccount(t, f)
	for _, tr := range mcpTransports {
		cs := mcpSession(t, f, a.write, tr)
		if n := len(toolNames(t, cs)); n != 33 {
			t.Fatalf("%s through a follower lists %d tools", tr, n)
		}
		addr := ctAddress("mcp-follower-" + string(tr))
		card := mustCall(t, cs, "create_portfolio_card", map[string]any{"body": map[string]any{"address": addr}})["card"].(map[string]any)
		got := do(t, "GET", leader.URL+"/v1/portfolio/cards/"+card["id"].(string), a.read, nil)
		expect(t, got, http.StatusOK, "")
		if got.JSON(t)["card"].(map[string]any)["address"] != addr {
			t.Fatalf("the leader has %s", got.Body)
		}
	}
	// The direct path of tools/call (protocol 2025-06-18) through the
	// follower too.
	r := do(t, "POST", f.URL+"/v1/mcp", a.read, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_portfolio_cards"}}`,
		"Accept", "application/json, text/event-stream", "MCP-Protocol-Version", "2025-06-18")
	expect(t, r, http.StatusOK, "")
	var answer struct {
		Result struct {
			StructuredContent struct {
				Cards []any `json:"cards"`
			} `json:"structuredContent"`
		} `json:"result"`
	}
	if err := json.Unmarshal(r.Body, &answer); err != nil || len(answer.Result.StructuredContent.Cards) != 2 {
		t.Fatalf("list_portfolio_cards through the follower: %s", r.Body)
	}
}
