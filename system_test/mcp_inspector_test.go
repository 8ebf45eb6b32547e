package system_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The MCP server from a client nobody here wrote: the MCP inspector
// (@modelcontextprotocol/inspector, pinned in testdata/mcp-inspector and
// installed by make test), in CLI mode, over both transports. Its client
// is the TypeScript SDK's, which also checks each result's structured
// content against the tool's output schema.

// inspectorPath is the inspector's command; the test fails, never skips,
// when it is missing.
func inspectorPath(t *testing.T) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("testdata", "mcp-inspector", "node_modules", ".bin", "mcp-inspector"))
	if err == nil {
		_, err = os.Stat(p)
	}
	if err != nil {
		t.Fatalf("the MCP inspector is not installed (make test-tools installs it with npm ci): %v", err)
	}
	return p
}

// inspect runs the inspector's CLI against target and returns its JSON
// answer; args follow --cli TARGET.
func inspect(t *testing.T, target []string, env []string, args ...string) map[string]any {
	t.Helper()
	cmd := exec.Command(inspectorPath(t), append(append([]string{"--cli"}, target...), args...)...)
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("inspector %v: %v\n%s\n%s", args, err, stdout.String(), stderr.String())
		}
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("inspector %v did not finish in 60 s:\n%s", args, stderr.String())
	}
	var answer map[string]any
	if err := json.Unmarshal([]byte(stdout.String()), &answer); err != nil {
		t.Fatalf("inspector %v printed no JSON: %v\n%s\n%s", args, err, stdout.String(), stderr.String())
	}
	return answer
}

func TestMCPInspectorConformance(t *testing.T) {
	t.Parallel()
	eachMCPTransport(t, func(t *testing.T, s *server, tr mcpTransport, a mcpAccount) {
		var target, env []string
		switch tr {
		case mcpHTTP:
			target = []string{s.URL + "/v1/mcp", "--transport", "http", "--header", "Authorization: Bearer " + a.write}
		case mcpStdio:
			target = []string{cliBinary(t), "mcp"}
			env = []string{"ADDRWATCH_URL=" + s.URL, "ADDRWATCH_API_KEY=" + a.write}
		}
		// The Sheet Space the upsert writes to, made over REST.
		spaces := do(t, "GET", s.URL+"/v1/bookmark-spaces", a.write, nil).JSON(t)
		r := do(t, "POST", s.URL+"/v1/bookmark-spaces", a.write, map[string]any{"expected_bookmark_revision": spaces["bookmark_revision"], "name": "Inspected", "type": "sheet"})
		expect(t, r, http.StatusCreated, "")
		sheet := r.JSON(t)["space"].(map[string]any)["id"].(string)
		revision := do(t, "GET", s.URL+"/v1/bookmark-spaces/"+sheet+"/sheet?limit=1", a.write, nil).JSON(t)["revision"]

		list := inspect(t, target, env, "--method", "tools/list")
		tools := list["tools"].([]any)
		var names []string
		for _, tl := range tools {
			names = append(names, tl.(map[string]any)["name"].(string))
		}
		if len(tools) != 33 {
			t.Fatalf("the inspector lists %d tools: %v", len(tools), names)
		}
		t.Logf("%s tools/list: %d tools: %s", tr, len(names), strings.Join(names, " "))

		structured := func(answer map[string]any) map[string]any {
			t.Helper()
			if answer["isError"] == true {
				t.Fatalf("a tool error: %v", answer)
			}
			body, _ := answer["structuredContent"].(map[string]any)
			if body == nil {
				t.Fatalf("no structured content: %v", answer)
			}
			return body
		}
		me := structured(inspect(t, target, env, "--method", "tools/call", "--tool-name", "me"))
		if me["capability"] != "write" || me["account_id"] != a.ID {
			t.Fatalf("me: %v", me)
		}
		t.Logf("%s me: %s", tr, compact(me))

		addr := ctAddress("inspector-" + string(tr))
		created := structured(inspect(t, target, env, "--method", "tools/call", "--tool-name", "create_portfolio_card",
			"--tool-arg", fmt.Sprintf(`body={"address":%q,"name":"Inspected"}`, addr)))
		card := created["card"].(map[string]any)
		if card["address"] != addr || card["effective_access"] != "write" {
			t.Fatalf("create_portfolio_card: %v", created)
		}
		t.Logf("%s create_portfolio_card: %s", tr, compact(created))

		cards := structured(inspect(t, target, env, "--method", "tools/call", "--tool-name", "list_portfolio_cards"))
		if ids := cards["included_card_ids"].([]any); len(ids) != 1 || ids[0] != card["id"] {
			t.Fatalf("list_portfolio_cards: %v", cards)
		}
		t.Logf("%s list_portfolio_cards: %s", tr, compact(cards))

		put := structured(inspect(t, target, env, "--method", "tools/call", "--tool-name", "upsert_sheet_row",
			"--tool-arg", "space_id="+sheet,
			"--tool-arg", fmt.Sprintf(`body={"expected_revision":%v,"cells":[%q,"bitcoin","","","inspected"]}`, revision, addr)))
		if put["created"] != true || put["space_id"] != sheet {
			t.Fatalf("upsert_sheet_row: %v", put)
		}
		t.Logf("%s upsert_sheet_row: %s", tr, compact(put))

		// The same upsert again is stale: a tool error with the code.
		stale := inspect(t, target, env, "--method", "tools/call", "--tool-name", "upsert_sheet_row",
			"--tool-arg", "space_id="+sheet,
			"--tool-arg", fmt.Sprintf(`body={"expected_revision":%v,"cells":[%q,"bitcoin","","","again"]}`, revision, addr))
		text, _ := stale["content"].([]any)[0].(map[string]any)["text"].(string)
		if stale["isError"] != true || !strings.HasPrefix(text, "STALE_VERSION (HTTP 409): ") {
			t.Fatalf("a stale upsert: %v", stale)
		}
		t.Logf("%s stale upsert_sheet_row: %s", tr, compact(stale))

		docs := inspect(t, target, env, "--method", "resources/read", "--uri", "addrwatch://docs/sheets")
		if text := docs["contents"].([]any)[0].(map[string]any)["text"].(string); !strings.Contains(text, "Sheet") {
			t.Fatalf("the Sheet guide: %.200s", text)
		}
	})
}

func compact(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
