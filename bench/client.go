package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/valyala/fasthttp"
)

// client is the HTTP client of a run. The load goes through fasthttp's,
// because the harness must not be the bottleneck it measures (net/http
// allocates several times more per request); so do the admin and owner
// calls of setup, which warms its connections. Setup's calls to the Agent
// API go through package client instead, over setupTransport (agent, in
// setupagent.go).
type client struct {
	hc             *fasthttp.Client
	setupTransport *http.Transport
	setupTimeout   time.Duration
}

func newClient(connections int, timeout time.Duration) *client {
	return &client{
		hc: &fasthttp.Client{
			Name:                     "addrwatch-bench",
			MaxConnsPerHost:          connections + setupParallelism,
			MaxConnWaitTimeout:       timeout,
			ReadTimeout:              timeout,
			WriteTimeout:             timeout,
			MaxIdleConnDuration:      time.Minute,
			NoDefaultUserAgentHeader: true,
			DisablePathNormalizing:   true, // send the paths exactly as built
			ReadBufferSize:           16 << 10,
		},
		setupTransport: newSetupTransport(connections),
		setupTimeout:   max(timeout, setupCallTimeoutMin),
	}
}

// request is one HTTP request of a scenario. op names it in the report:
// the method and the route with its parameters as placeholders, so every
// Sheet's PUT lands in one row.
type request struct {
	op     string
	method string
	url    string
	bearer string
	// cookie is a Cookie header ("name=value"), for the site's pages.
	cookie string
	// header holds more header fields, as name/value pairs.
	header []string
	body   []byte
	// expect, when set, must be in a 2xx answer's body, or the answer
	// counts as an error: a page that answers 200 with the wrong content
	// (say, the sign-in form) must not pass for the page asked for.
	expect []byte
}

// response is what came back; body is a copy the worker may keep until its
// next request.
type response struct {
	status int
	body   []byte
	err    error
	// unexpected marks a 2xx answer without the request's expect.
	unexpected bool
}

func (r *response) ok() bool {
	return r.err == nil && r.status >= 200 && r.status < 300 && !r.unexpected
}

// failure returns "" for a success, else the key the report counts the
// error under: "409 STALE_VERSION" (status and the error body's code),
// "502" when the body has no code, or "transport: timeout".
func (r *response) failure() string {
	if r.err != nil {
		return "transport: " + transportReason(r.err)
	}
	if r.ok() {
		return ""
	}
	if r.unexpected {
		return fmt.Sprintf("%d unexpected body", r.status)
	}
	if code := errorCode(r.body); code != "" {
		return fmt.Sprintf("%d %s", r.status, code)
	}
	return fmt.Sprint(r.status)
}

// errorCode reads the code of an error body. addrwatch's is a string
// ({"code":"STALE_VERSION"}); the etcd gateway's is a number.
func errorCode(body []byte) string {
	var e struct {
		Code json.RawMessage `json:"code"`
	}
	if json.Unmarshal(body, &e) != nil || len(e.Code) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(e.Code, &s) == nil {
		return s
	}
	return "code " + string(e.Code)
}

// transportReason shortens a client error to a stable label, so a report
// groups a thousand timeouts into one line rather than a thousand.
func transportReason(err error) string {
	var ne net.Error
	switch {
	case errors.Is(err, fasthttp.ErrTimeout), errors.Is(err, os.ErrDeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return "timeout"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, fasthttp.ErrConnectionClosed):
		return "connection reset"
	case errors.Is(err, fasthttp.ErrNoFreeConns):
		return "no free connections"
	}
	s := err.Error()
	if len(s) > 60 {
		s = s[:60] + "…"
	}
	return s
}

// do sends req and fills resp. It never returns early on a status: the
// caller decides what a status means.
func (c *client) do(req *request, resp *response) {
	hreq, hresp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(hreq)
	defer fasthttp.ReleaseResponse(hresp)
	hreq.Header.SetMethod(req.method)
	hreq.SetRequestURI(req.url)
	if req.bearer != "" {
		hreq.Header.Set(fasthttp.HeaderAuthorization, "Bearer "+req.bearer)
	}
	if req.cookie != "" {
		hreq.Header.Set(fasthttp.HeaderCookie, req.cookie)
	}
	for i := 0; i+1 < len(req.header); i += 2 {
		hreq.Header.Set(req.header[i], req.header[i+1])
	}
	if req.body != nil {
		hreq.Header.SetContentType("application/json")
		hreq.SetBodyRaw(req.body)
	}
	resp.err = c.hc.Do(hreq, hresp)
	resp.status = hresp.StatusCode()
	resp.body = append(resp.body[:0], hresp.Body()...)
	resp.unexpected = req.expect != nil && resp.err == nil && resp.status >= 200 && resp.status < 300 &&
		!bytes.Contains(resp.body, req.expect)
}

// call is the setup path for everything but the Agent API (the admin and
// owner APIs, health checks): JSON in, JSON out, and any status other than
// want is an error that says what was asked and what came back.
func (c *client) call(method, url, bearer string, body any, want int, into any) error {
	req := &request{method: method, url: url, bearer: bearer}
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		req.body = b
	}
	var resp response
	c.do(req, &resp)
	if resp.err != nil {
		return fmt.Errorf("%s %s: %w", method, url, resp.err)
	}
	if resp.status != want {
		return &statusError{method: method, url: url, status: resp.status, body: strings.TrimSpace(string(resp.body))}
	}
	if into != nil {
		if err := json.Unmarshal(resp.body, into); err != nil {
			return fmt.Errorf("%s %s: undecodable answer: %w", method, url, err)
		}
	}
	return nil
}

// statusError is an unexpected status during setup.
type statusError struct {
	method, url string
	status      int
	body        string
}

func (e *statusError) Error() string {
	return fmt.Sprintf("%s %s: status %d: %s", e.method, e.url, e.status, e.body)
}

// appendJSONString appends s as a JSON string; request bodies on the hot
// path are assembled by hand to keep encoding/json's reflection out of the
// numbers.
func appendJSONString(b []byte, s string) []byte {
	enc, _ := json.Marshal(s)
	return append(b, enc...)
}

// jsonStrings encodes a string array once, for reuse in many bodies.
func jsonStrings(values ...string) []byte {
	var b bytes.Buffer
	b.WriteByte('[')
	for i, v := range values {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(appendJSONString(nil, v))
	}
	b.WriteByte(']')
	return b.Bytes()
}
