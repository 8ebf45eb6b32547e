package mcphttp

import (
	"encoding/json"
	"errors"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/actors"
)

// fakeHost is a host whose API answers from a table: the endpoint is
// tested here on its own; httpd's tests serve it in front of the real API.
type fakeHost struct {
	// answers maps "METHOD /v1/path" to a status and body; anything else is
	// a 404.
	answers map[string]fakeAnswer
	// forged is a key the host refuses.
	forged string
}

type fakeAnswer struct {
	status int
	body   string
}

func (h *fakeHost) CheckBearer(ctx *fasthttp.RequestCtx) error {
	if !strings.HasPrefix(string(ctx.Request.Header.Peek(fasthttp.HeaderAuthorization)), "Bearer ") {
		return actors.ErrUnauthorized
	}
	return nil
}

func (h *fakeHost) Authenticate(ctx *fasthttp.RequestCtx) (Key, error) {
	if err := h.CheckBearer(ctx); err != nil {
		return Key{}, err
	}
	if string(ctx.Request.Header.Peek(fasthttp.HeaderAuthorization)) == "Bearer "+h.forged {
		return Key{}, actors.ErrUnauthorized
	}
	return Key{ID: "account.key", Capability: actors.LevelRead}, nil
}

func (h *fakeHost) OwnOrigin(ctx *fasthttp.RequestCtx, origin []byte) bool {
	return string(origin) == "http://"+string(ctx.Host())
}

func (h *fakeHost) ClientIP(ctx *fasthttp.RequestCtx) string { return ctx.RemoteIP().String() }

func (h *fakeHost) RequireJSON(ctx *fasthttp.RequestCtx) error {
	if string(ctx.Request.Header.ContentType()) != "application/json" {
		return actors.Errorf(actors.CodeValidation, "Content-Type must be application/json")
	}
	return nil
}

func (h *fakeHost) BadRequest(message string) error {
	return actors.Errorf("BAD_REQUEST", "%s", message)
}

func (h *fakeHost) Forbidden(message string) error {
	return actors.Errorf(actors.CodeForbidden, "%s", message)
}

func (h *fakeHost) WriteError(ctx *fasthttp.RequestCtx, err error) {
	var e *actors.Error
	if !errors.As(err, &e) {
		e = actors.Errorf(actors.CodeInternal, "%v", err)
	}
	status := map[actors.Code]int{actors.CodeUnauthorized: 401, actors.CodeForbidden: 403, actors.CodeNotFound: 404, actors.CodeValidation: 422}[e.Code]
	if status == 0 {
		status = 400
	}
	ctx.SetStatusCode(status)
	ctx.SetContentType("application/json")
	body, _ := json.Marshal(e)
	ctx.SetBody(body)
}

func (h *fakeHost) Run(ctx *fasthttp.RequestCtx, clientIP string) {
	if string(ctx.Request.Header.Peek(fasthttp.HeaderAuthorization)) == "Bearer "+h.forged {
		h.WriteError(ctx, actors.ErrUnauthorized)
		return
	}
	a, ok := h.answers[string(ctx.Method())+" "+string(ctx.Path())]
	if !ok {
		h.WriteError(ctx, actors.Errorf(actors.CodeNotFound, "no such card"))
		return
	}
	ctx.SetStatusCode(a.status)
	ctx.SetContentType("application/json")
	ctx.SetBodyString(a.body)
}

// newFakeEndpoint is the endpoint in front of a fakeHost that answers me,
// one card and a list, and refuses the key "forged".
func newFakeEndpoint(t testing.TB) *Endpoint {
	t.Helper()
	doc, err := os.ReadFile("../../httpd/openapi/agent.json")
	if err != nil {
		t.Fatal(err)
	}
	host := &fakeHost{forged: "forged", answers: map[string]fakeAnswer{
		"GET /v1/me":                    {200, `{"account_id":"a","capability":"read"}`},
		"GET /v1/portfolio/cards/card1": {200, `{"card":{"id":"card1","name":"Cold \"<b>\"","note":"line\nnext \u0001"}}`},
		"GET /v1/portfolio/cards":       {200, `{"cards":[]}`},
		"POST /v1/portfolio/cards":      {403, `{"code":"FORBIDDEN","error":"a read key cannot write"}`},
	}}
	e, err := New(Config{OpenAPI: doc, Prefix: "/v1", Version: "test", Host: host, MaxBodyBytes: 1 << 20, RequestTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// post sends one JSON-RPC message to the endpoint and returns the status
// and the body; no Authorization without bearer, no Origin without origin.
func post(e *Endpoint, bearer, version, origin, body string) (int, []byte) {
	var req fasthttp.Request
	req.Header.SetMethod("POST")
	req.SetRequestURI("http://addrwatch.example/v1/mcp")
	if bearer != "" {
		req.Header.Set(fasthttp.HeaderAuthorization, "Bearer "+bearer)
	}
	req.Header.Set(fasthttp.HeaderAccept, "application/json, text/event-stream")
	req.Header.SetContentType("application/json")
	if version != "" {
		req.Header.Set("Mcp-Protocol-Version", version)
	}
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	req.SetBodyString(body)
	ctx := &fasthttp.RequestCtx{}
	ctx.Init(&req, &net.TCPAddr{IP: net.ParseIP("192.0.2.9"), Port: 40000}, nil)
	e.Serve(ctx)
	return ctx.Response.StatusCode(), append([]byte(nil), ctx.Response.Body()...)
}
