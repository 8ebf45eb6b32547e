package system_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/addrwatch/addrwatch/mcpserver"
)

// MCP clients of the Go SDK against the real server, over both ways in:
// Streamable HTTP at /v1/mcp, and the CLI's "addrwatch mcp" over stdio.

// mcpTransport names a way to reach the MCP server.
type mcpTransport string

const (
	mcpHTTP  mcpTransport = "http"
	mcpStdio mcpTransport = "stdio"
)

var mcpTransports = []mcpTransport{mcpHTTP, mcpStdio}

// eachMCPTransport runs test once per transport, on one server, each run
// with an account of its own.
func eachMCPTransport(t *testing.T, test func(t *testing.T, s *server, tr mcpTransport, a mcpAccount)) {
	s := startServer(t)
	for _, tr := range mcpTransports {
		t.Run(string(tr), func(t *testing.T) { test(t, s, tr, newMCPAccount(t, s)) })
	}
}

// bearerTransport adds an API key to each request.
type bearerTransport struct{ key string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.key)
	return http.DefaultTransport.RoundTrip(r)
}

// mcpSession connects an SDK client to s with key over tr.
func mcpSession(t testing.TB, s *server, key string, tr mcpTransport) *mcp.ClientSession {
	t.Helper()
	cs, err := mcpConnect(s, key, tr)
	if err != nil {
		t.Fatalf("MCP over %s: %v", tr, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func mcpConnect(s *server, key string, tr mcpTransport) (*mcp.ClientSession, error) {
	var transport mcp.Transport
	switch tr {
	case mcpHTTP:
		transport = &mcp.StreamableClientTransport{Endpoint: s.URL + "/v1/mcp", HTTPClient: &http.Client{Transport: bearerTransport{key}}}
	case mcpStdio:
		cmd := exec.Command(cliBinary(s.t), "mcp")
		cmd.Env = append(os.Environ(), "ADDRWATCH_URL="+s.URL, "ADDRWATCH_API_KEY="+key)
		transport = &mcp.CommandTransport{Command: cmd}
	}
	return mcp.NewClient(&mcp.Implementation{Name: "addrwatch-system-test", Version: "1"}, nil).Connect(context.Background(), transport, nil)
}

// cliBuild is the addrwatch CLI, built once for every test that runs it.
var cliBuild builtOnce

// cliBinary is the addrwatch CLI, built by the first test that asks.
func cliBinary(t testing.TB) string {
	t.Helper()
	return cliBuild.get(t, "addrwatch", "github.com/addrwatch/addrwatch/cmd/addrwatch")
}

// mcpResult is a tool call's outcome: the structured content, or for a
// tool error the API's error and its spec code.
type mcpResult struct {
	Body map[string]any
	Code string
	Text string
}

// mcpCall calls a tool; a protocol error fails the test (the API's errors
// must come back as tool errors).
func mcpCall(t testing.TB, cs *mcp.ClientSession, tool string, args map[string]any) mcpResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: a protocol error: %v", tool, err)
	}
	var out mcpResult
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			out.Text += tc.Text
		}
	}
	content := res.StructuredContent
	if res.IsError {
		content = res.Meta[mcpserver.ErrorMeta]
	}
	raw, err := json.Marshal(content)
	if err != nil || json.Unmarshal(raw, &out.Body) != nil || out.Body == nil {
		t.Fatalf("%s: structured content (or, for an error, its _meta) is not an object: %s", tool, raw)
	}
	if res.IsError {
		out.Code, _ = out.Body["code"].(string)
		if out.Code == "" || !strings.HasPrefix(out.Text, out.Code) {
			t.Fatalf("%s: a tool error without the spec's code: %s", tool, out.Text)
		}
	}
	return out
}

// mustCall is mcpCall for a call that must succeed.
func mustCall(t testing.TB, cs *mcp.ClientSession, tool string, args map[string]any) map[string]any {
	t.Helper()
	r := mcpCall(t, cs, tool, args)
	if r.Code != "" {
		t.Fatalf("%s %v: %s", tool, args, r.Text)
	}
	return r.Body
}

// toolNames lists the tools a session is offered.
func toolNames(t testing.TB, cs *mcp.ClientSession) map[string]*mcp.Tool {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]*mcp.Tool{}
	for _, tl := range res.Tools {
		names[tl.Name] = tl
	}
	return names
}
