package mcphttp

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"sync"
	"unicode/utf8"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/actors"
	"github.com/addrwatch/addrwatch/mcpserver"
)

// The direct path of a tools/call. The SDK's stateless transport makes a
// session, a JSON-RPC connection and its goroutines for every POST, and
// encodes the answer twice over; measured, that put MCP at a twelfth of
// the REST request it wraps. A tools/call is the one message an agent
// sends over and over, so it is answered here instead: the message is
// decoded, the tool run by the same mcpserver code the SDK would call, and
// the JSON-RPC answer written once. Its key is checked by the API request
// the tool makes (a refusal there is this request's 401), not once more
// before it.
//
// Only a plain call is taken: one JSON-RPC request, a protocol version
// this path answers alike, a known tool, arguments that are an object, and
// nothing more (no _meta, which may ask for progress notifications). Any
// other message goes to the SDK. A test sends the same calls both ways
// and requires the same answers.

// directVersions are the protocol versions whose tools/call this path
// answers: those whose answer to a plain call is the result alone. (The
// 2026-07-28 revision moves the version into each request's _meta; the SDK
// answers it.)
var directVersions = []string{"2025-11-25", "2025-06-18", "2025-03-26"}

// directCall is a tools/call as this path takes it. Any other member makes
// decoding fail, and the message goes to the SDK.
type directCall struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"params"`
}

// direct answers ctx's request if it is a tools/call this path takes, and
// reports whether it did.
func (e *Endpoint) direct(ctx *fasthttp.RequestCtx) bool {
	if !slices.Contains(directVersions, string(ctx.Request.Header.Peek("Mcp-Protocol-Version"))) {
		return false
	}
	var call directCall
	if jsonv2.Unmarshal(ctx.Request.Body(), &call, jsonv2.RejectUnknownMembers(true)) != nil || call.JSONRPC != "2.0" || call.Method != "tools/call" || !plainID(call.ID) {
		return false
	}
	if args := bytes.TrimSpace(call.Params.Arguments); len(args) > 0 && args[0] != '{' && !bytes.Equal(args, []byte("null")) {
		return false
	}
	who := &auth.TokenInfo{Extra: map[string]any{"caller": e.callerOf(ctx)}}
	res, known := e.tools.CallTool(context.Background(), who, call.Params.Name, call.Params.Arguments)
	if !known {
		return false
	}
	if refused(res, "UNAUTHORIZED") {
		e.host.WriteError(ctx, actors.ErrUnauthorized)
		return true
	}
	ctx.SetContentType("application/json")
	scratch := answerBuffers.Get().(*[]byte)
	*scratch = appendToolAnswer((*scratch)[:0], call.ID, res)
	ctx.SetBody(*scratch) // copied into the response's own pooled buffer
	answerBuffers.Put(scratch)
	return true
}

// answerBuffers are where answers are put together, for reuse: an answer
// holds the API's JSON twice.
var answerBuffers = sync.Pool{New: func() any { return new([]byte) }}

// plainID reports whether id is a JSON-RPC request id the SDK would echo
// as it came: a string, or an integer in int64's range (a null id, or
// none, is a notification; a fraction or an exponent the SDK would round).
func plainID(id json.RawMessage) bool {
	id = bytes.TrimSpace(id)
	if len(id) > 0 && id[0] == '"' {
		return true
	}
	_, err := strconv.ParseInt(string(id), 10, 64)
	return err == nil
}

// refused reports whether res is a tool error with the API's code.
func refused(res *mcp.CallToolResult, code string) bool {
	detail, _ := res.Meta[mcpserver.ErrorMeta].(map[string]any)
	return res.IsError && detail["code"] == code
}

// appendToolAnswer appends the JSON-RPC answer carrying res. A success is
// written by hand: the API's JSON as structured content, as it came, and
// as the text block; anything else is encoded as the SDK encodes it. The
// tool has run by then, so an answer that cannot be encoded (not
// expected) is a JSON-RPC internal error, never a second run by the SDK.
func appendToolAnswer(b []byte, id json.RawMessage, res *mcp.CallToolResult) []byte {
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, bytes.TrimSpace(id)...)
	raw, isRaw := res.StructuredContent.(json.RawMessage)
	if text, isText := onlyText(res); isRaw && isText && !res.IsError && res.Meta == nil {
		if utf8.ValidString(text) {
			b = append(b, `,"result":{"content":[{"type":"text","text":`...)
			b = appendQuoted(b, text)
			b = append(b, `}],"structuredContent":`...)
			b = append(b, raw...)
			return append(b, "}}"...)
		}
	}
	enc, err := json.Marshal(res)
	if err != nil {
		return append(b, `,"error":{"code":-32603,"message":"the tool's result could not be encoded"}}`...)
	}
	b = append(b, `,"result":`...)
	b = append(b, enc...)
	return append(b, '}')
}

// appendQuoted appends s, valid UTF-8, as a JSON string: the quote, the
// backslash and the control characters escaped, everything else as it is
// (JSON allows any other character in a string). The API's JSON, a run
// of mostly plain ASCII, is the usual s; it is copied a run at a time.
func appendQuoted(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\n':
			b = append(b, '\\', 'n')
		case '\t':
			b = append(b, '\\', 't')
		case '\r':
			b = append(b, '\\', 'r')
		default:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
		start = i + 1
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// onlyText returns the text of a result whose content is one text block.
func onlyText(res *mcp.CallToolResult) (string, bool) {
	if len(res.Content) != 1 {
		return "", false
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok || tc.Meta != nil || tc.Annotations != nil {
		return "", false
	}
	return tc.Text, true
}
