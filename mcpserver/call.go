package mcpserver

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Request is one Agent API request a tool call stands for.
type Request struct {
	Method string
	// Path is under /v1 ("/portfolio/cards/abc"), its parameters escaped.
	Path           string
	Query          url.Values
	IdempotencyKey string
	Body           []byte // JSON, or nil for none
}

// Reply is the API's answer.
type Reply struct {
	Status     int
	Body       []byte
	RetryAfter string // the Retry-After header of a 429 or 503
}

// Argument names a tool adds to an operation's parameters.
const (
	argBody           = "body"
	argIdempotencyKey = "idempotency_key"
)

// request builds the API request of a tool call from its arguments. The
// tool checks only their shape (which arguments, strings where a path
// needs one); the body goes to the API as sent, so what it accepts and
// refuses is exactly what /v1 does.
func (op operation) request(args json.RawMessage) (Request, error) {
	r := Request{Method: op.method, Query: url.Values{}}
	fields := map[string]json.RawMessage{}
	if len(args) > 0 && string(args) != "null" {
		if err := json.Unmarshal(args, &fields); err != nil {
			return r, fmt.Errorf("the arguments must be a JSON object: %v", err)
		}
	}
	for name := range fields {
		if !slices.Contains(op.argNames(), name) {
			return r, fmt.Errorf("unknown argument %q; this tool takes %s", name, strings.Join(op.argNames(), ", "))
		}
	}
	path := op.path
	for _, p := range op.params {
		raw, given := fields[p.name]
		if !given {
			if p.required {
				return r, fmt.Errorf("the argument %q is required", p.name)
			}
			continue
		}
		value, err := scalar(raw)
		if err != nil {
			return r, fmt.Errorf("the argument %q: %v", p.name, err)
		}
		if p.in == "path" {
			if value == "" {
				return r, fmt.Errorf("the argument %q must not be empty", p.name)
			}
			path = strings.Replace(path, "{"+p.name+"}", url.PathEscape(value), 1)
			continue
		}
		r.Query.Set(p.name, value)
	}
	r.Path = path
	if raw, given := fields[argIdempotencyKey]; given {
		if err := json.Unmarshal(raw, &r.IdempotencyKey); err != nil {
			return r, fmt.Errorf("the argument %q must be a string", argIdempotencyKey)
		}
	}
	if raw, given := fields[argBody]; given {
		r.Body = raw
	}
	return r, nil
}

// argNames lists the arguments a tool takes, in schema order.
func (op operation) argNames() []string {
	var names []string
	for _, p := range op.params {
		names = append(names, p.name)
	}
	if op.idempotent {
		names = append(names, argIdempotencyKey)
	}
	if op.body != nil {
		names = append(names, argBody)
	}
	return names
}

// scalar is a path or query argument as the URL carries it: a string as
// is, a number or boolean in its JSON spelling (a model may send limit as
// 25 or "25"; the API parses the text either way).
func scalar(raw json.RawMessage) (string, error) {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return "", err
	}
	switch t := v.(type) {
	case string:
		return t, nil
	case float64:
		return strings.TrimSpace(string(raw)), nil
	case bool:
		return strconv.FormatBool(t), nil
	default:
		return "", fmt.Errorf("must be a string, number or boolean")
	}
}

// newIdempotencyKey is a fresh token for one intended operation: 128 bits
// from crypto/rand, within the spec's 16 to 128 characters.
func newIdempotencyKey() string {
	return "mcp-" + rand.Text()
}

// toolResult turns the API's answer into the tool's: a success is the
// API's JSON as structured content (and as text, for hosts that show only
// text); an error is a tool error carrying the spec's code and message,
// with what to do next.
func toolResult(reply Reply, idempotencyKey string) *mcp.CallToolResult {
	if reply.Status >= 200 && reply.Status < 300 {
		return &mcp.CallToolResult{
			Content:           []mcp.Content{&mcp.TextContent{Text: string(reply.Body)}},
			StructuredContent: json.RawMessage(reply.Body),
		}
	}
	var e struct {
		Code  string `json:"code"`
		Error string `json:"error"`
	}
	if err := json.Unmarshal(reply.Body, &e); err != nil || e.Code == "" {
		e.Code, e.Error = "HTTP_ERROR", fmt.Sprintf("the API answered HTTP %d without an error body", reply.Status)
	}
	return toolError(e.Code, e.Error, reply.Status, reply.RetryAfter, idempotencyKey)
}

// toolError is a failed call as a tool error (never a protocol error, so
// the model sees it and can act on it). Its text starts with the spec's
// code.
func toolError(code, message string, status int, retryAfter, idempotencyKey string) *mcp.CallToolResult {
	detail := map[string]any{"code": code, "error": message}
	text := code
	if status != 0 {
		detail["status"] = status
		text += fmt.Sprintf(" (HTTP %d)", status)
	}
	text += ": " + message + "\n" + nextStep(code, retryAfter)
	if retryAfter != "" {
		detail["retry_after_seconds"] = retryAfter
	}
	if idempotencyKey != "" && retryable(code) {
		detail[argIdempotencyKey] = idempotencyKey
		text += fmt.Sprintf("\nTo retry this same operation safely, pass idempotency_key %q: the server then applies it at most once.", idempotencyKey)
	}
	return &mcp.CallToolResult{
		IsError: true,
		Content: []mcp.Content{&mcp.TextContent{Text: text}},
		Meta:    mcp.Meta{ErrorMeta: detail},
	}
}

// ErrorMeta is the _meta entry of a tool error holding the API's error
// for programs: code, error (the message), status, and when given
// retry_after_seconds and idempotency_key. It is not structured content:
// clients check structured content against the tool's output schema,
// which describes the success answer, even on an error (the TypeScript
// SDK does).
const ErrorMeta = "addrwatch/error"

// retryable codes are those where the same request may later succeed.
func retryable(code string) bool { return code == "RATE_LIMITED" || code == "HTTP_ERROR" }

// nextStep tells a model what an error code means for its next move.
func nextStep(code, retryAfter string) string {
	switch code {
	case "UNAUTHORIZED":
		return "The API key is missing, wrong or revoked: ask the owner for a valid key."
	case "FORBIDDEN":
		return "This key or the resource's grant does not allow it (a read key never writes): do not retry; ask the owner to grant access if the task needs it."
	case "NOT_FOUND":
		return "It does not exist, or this key cannot see it: check the ID with a list tool."
	case "VALIDATION", "BAD_REQUEST":
		return "The arguments were not accepted: fix them (see the tool's input schema and the docs resource) and call again."
	case "STALE_VERSION":
		return "It changed since you read it: read it again, check it is still what you meant, and retry at most once with the new version or revision; if it conflicts again, ask the owner."
	case "RATE_LIMITED":
		if retryAfter != "" {
			return "Too many requests: wait " + retryAfter + " seconds before calling again."
		}
		return "Too many requests: wait before calling again."
	case "HTTP_ERROR":
		return "A temporary failure (the server or an upstream could not answer): try again later."
	case "IDEMPOTENCY_CONFLICT":
		return "This idempotency_key was used for a different request: use a fresh one for a new operation."
	default:
		return "This is not retryable as is: read the current state and decide, or ask the owner."
	}
}
