package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"net/url"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Caller runs one Agent API request for the key behind a tool call. who
// is what the HTTP transport verified about the caller (nil over stdio,
// where the process has one key).
type Caller func(ctx context.Context, who *auth.TokenInfo, r Request) (Reply, error)

// Config wires a server.
type Config struct {
	// OpenAPI is the Agent API's document (/v1/openapi.json); the tools
	// are made from its operations.
	OpenAPI []byte
	// Call performs an API request.
	Call Caller
	// ReadOnly reports whether the key behind a request can only read;
	// its tool list then holds only the tools a read key can use. A direct call of a
	// write tool still reaches the API, which refuses it with FORBIDDEN.
	ReadOnly func(ctx context.Context, who *auth.TokenInfo) bool
	// Mismatch, when set, is told of each operation of the document
	// without a tool here, and each tool whose operation the document
	// lacks, and New goes on without them: for a client of a server of
	// another version (addrwatch mcp during a rolling upgrade). Unset, a
	// mismatch is New's error: addrwatchd's embedded document and this
	// table must agree, and its tests fail when they do not.
	Mismatch func(error)
	// Version is the server version announced to clients.
	Version string
	Logger  *slog.Logger
}

// instructions are what a host tells its model about this server.
const instructions = `addrwatch keeps an account's Bitcoin addresses: Account cards in a Portfolio (each with a transaction History and notes), Spaces of bookmark cards, and Sheet Spaces (5 columns by 1000 rows).
Start with the me tool: it says whether this key can write and which resources it sees. Read before you write: every edit needs the version or revision from a recent read, and a STALE_VERSION error means read again and retry at most once.
The guide resources (agent-api-guide, sheet-guide) explain every rule.`

// Server is the MCP server of the Agent API.
type Server struct {
	// MCP is the SDK's server, for a transport to serve.
	MCP  *mcp.Server
	call Caller
	ops  map[string]operation // by tool name
}

// New builds the MCP server of the Agent API: a tool per operation, the
// documents as resources.
func New(cfg Config) (*Server, error) {
	ops, components, err := parseDocument(cfg.OpenAPI)
	if err != nil {
		return nil, err
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "addrwatch", Title: "addrwatch Agent API", Version: cfg.Version},
		&mcp.ServerOptions{Instructions: instructions, Logger: logger})
	server := &Server{MCP: s, call: cfg.Call, ops: map[string]operation{}}
	readTools := map[string]bool{}
	seen := map[string]bool{}
	for _, op := range ops {
		seen[op.id] = true
		if doc, ok := documents[op.id]; ok {
			s.AddResource(&mcp.Resource{URI: doc.uri, Name: doc.name, Title: doc.title, MIMEType: doc.mime, Description: doc.description}, readDocument(cfg.Call, op, doc))
			continue
		}
		t, ok := tools[op.id]
		if !ok {
			err := fmt.Errorf("operation %s (%s %s) has no tool", op.id, op.method, op.path)
			if cfg.Mismatch == nil {
				return nil, err
			}
			cfg.Mismatch(err)
			continue
		}
		s.AddTool(t.mcpTool(op, components), server.handler(op))
		server.ops[t.name] = op
		if t.forReadKeys() {
			readTools[t.name] = true
		}
	}
	for _, id := range slices.Sorted(maps.Keys(tools)) {
		if !seen[id] {
			err := fmt.Errorf("tool %s names no operation of the document", tools[id].name)
			if cfg.Mismatch == nil {
				return nil, err
			}
			cfg.Mismatch(err)
		}
	}
	if cfg.ReadOnly != nil {
		s.AddReceivingMiddleware(listOnly(readTools, cfg.ReadOnly))
	}
	return server, nil
}

// CallTool runs the tool named name with args for who, as a tools/call of
// it would; known is false when no tool has that name. It is for a
// transport that answers tool calls itself (httpd's direct path for
// tools/call), and gives exactly the result the SDK's server would send.
func (s *Server) CallTool(ctx context.Context, who *auth.TokenInfo, name string, args json.RawMessage) (res *mcp.CallToolResult, known bool) {
	op, known := s.ops[name]
	if !known {
		return nil, false
	}
	return runTool(ctx, s.call, op, who, args), true
}

// mcpTool is the tool's MCP description: its input schema is the
// operation's parameters, an optional idempotency_key and its body, each
// with the document's own schema; its output schema is the success
// response's.
func (t tool) mcpTool(op operation, components map[string]map[string]any) *mcp.Tool {
	props := map[string]any{}
	var required []string
	for _, p := range op.params {
		schema := map[string]any{}
		maps.Copy(schema, p.schema)
		if p.doc != "" {
			schema["description"] = p.doc
		}
		props[p.name] = schema
		if p.required {
			required = append(required, p.name)
		}
	}
	if op.idempotent {
		props[argIdempotencyKey] = map[string]any{
			"type": "string", "minLength": 16, "maxLength": 128, "pattern": "^[A-Za-z0-9._~-]+$",
			"description": "Optional. Omit it for a new operation (the server makes a fresh one). When retrying an operation whose outcome you do not know, pass the key from its error so it is applied at most once.",
		}
	}
	if op.body != nil {
		props[argBody] = op.body
		if op.bodyRequired {
			required = append(required, argBody)
		}
	}
	input := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		input["required"] = required
	}
	mt := &mcp.Tool{
		Name:        t.name,
		Title:       t.title,
		Description: t.description,
		InputSchema: selfContained(input, components),
		Annotations: &mcp.ToolAnnotations{
			Title:        t.title,
			ReadOnlyHint: t.readOnly,
			// A read-only tool's other hints mean nothing; MCP says to
			// ignore them, and they are left at their defaults.
			IdempotentHint: t.idempotent,
			OpenWorldHint:  &t.openWorld,
		},
	}
	if !t.readOnly {
		mt.Annotations.DestructiveHint = &t.destructive
	}
	if op.output != nil {
		if out := selfContained(op.output, components); out["type"] == "object" {
			mt.OutputSchema = out
		}
	}
	return mt
}

// handler is a tool's handler in the SDK's server.
func (s *Server) handler(op operation) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return runTool(ctx, s.call, op, who(req), req.Params.Arguments), nil
	}
}

// runTool is one tool call: arguments to request, the API's answer to the
// result. Every failure is a tool error, never a protocol error.
func runTool(ctx context.Context, call Caller, op operation, who *auth.TokenInfo, args json.RawMessage) *mcp.CallToolResult {
	r, err := op.request(args)
	if err != nil {
		return toolError("VALIDATION", err.Error(), 0, "", "")
	}
	if op.idempotent && r.IdempotencyKey == "" {
		r.IdempotencyKey = newIdempotencyKey()
	}
	reply, err := call(ctx, who, r)
	if err != nil {
		return toolError("HTTP_ERROR", "the request did not complete: "+err.Error(), 0, "", r.IdempotencyKey)
	}
	return toolResult(reply, r.IdempotencyKey)
}

// readDocument serves a public document of the API as a resource.
func readDocument(call Caller, op operation, doc resourceDoc) mcp.ResourceHandler {
	return func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		reply, err := call(ctx, who(req), Request{Method: op.method, Path: op.path, Query: url.Values{}})
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", doc.uri, err)
		}
		if reply.Status != 200 {
			return nil, fmt.Errorf("read %s: HTTP %d", doc.uri, reply.Status)
		}
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: doc.uri, MIMEType: doc.mime, Text: string(reply.Body)}}}, nil
	}
}

// who is the verified caller of an MCP request, or nil.
func who(req mcp.Request) *auth.TokenInfo {
	if extra := req.GetExtra(); extra != nil {
		return extra.TokenInfo
	}
	return nil
}

// listOnly answers tools/list for a read-only key with the read tools
// alone: a model is not offered what the key can never do.
func listOnly(readTools map[string]bool, readOnly func(context.Context, *auth.TokenInfo) bool) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if err != nil || method != "tools/list" || !readOnly(ctx, who(req)) {
				return res, err
			}
			list, ok := res.(*mcp.ListToolsResult)
			if !ok {
				return res, err
			}
			kept := *list
			kept.Tools = slices.DeleteFunc(slices.Clone(list.Tools), func(t *mcp.Tool) bool { return !readTools[t.Name] })
			return &kept, nil
		}
	}
}
