package httpd

import (
	"bufio"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/actors"
)

// parseHead parses a raw request head as the server does, headerReceived
// included.
func parseHead(t *testing.T, raw string) *fasthttp.RequestHeader {
	t.Helper()
	var h fasthttp.RequestHeader
	if err := h.Read(bufio.NewReader(strings.NewReader(raw))); err != nil {
		t.Fatalf("fasthttp refuses %q itself: %v", raw, err)
	}
	headerReceived(&h, false)
	return &h
}

func TestRefuseHeadFraming(t *testing.T) {
	cases := []struct {
		name, raw string
		want      actors.Code // "" for served
	}{
		{"plain GET", "GET /v1/me HTTP/1.1\r\nHost: x\r\n\r\n", ""},
		{"content length", "POST /v1/me HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n", ""},
		{"chunked", "POST /v1/me HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n", ""},
		{"chunked, any case", "POST /v1/me HTTP/1.1\r\nHost: x\r\ntransfer-encoding: Chunked\r\n\r\n", ""},
		{"HTTP/1.0 without Host", "GET /v1/me HTTP/1.0\r\n\r\n", ""},
		{"length then chunked", "POST /v1/me HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n", codeBadRequest},
		{"chunked then length", "POST /v1/me HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 4\r\n\r\n", codeBadRequest},
		{"identity", "POST /v1/me HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: identity\r\n\r\n", codeBadRequest},
		{"identity with length", "POST /v1/me HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: identity\r\nContent-Length: 5\r\n\r\n", codeBadRequest},
		{"chunked in HTTP/1.0", "POST /v1/me HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", codeBadRequest},
		{"HTTP/2.0", "GET /v1/me HTTP/2.0\r\nHost: x\r\n\r\n", codeVersionNotSupported},
		{"HTTP/0.9", "GET /v1/me HTTP/0.9\r\nHost: x\r\n\r\n", codeVersionNotSupported},
		{"HTTP/3.0", "GET /v1/me HTTP/3.0\r\nHost: x\r\n\r\n", codeVersionNotSupported},
		{"HTTP/1.2 as 1.1", "GET /v1/me HTTP/1.2\r\nHost: x\r\n\r\n", ""},
		{"HTTP/1.9 as 1.1, Host missing", "GET /v1/me HTTP/1.9\r\n\r\n", codeBadRequest},
	}
	for _, c := range cases {
		h := parseHead(t, c.raw)
		err := typedErr(refuseHead(h))
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: refused with %v", c.name, err)
		case c.want != "" && (err == nil || err.Code != c.want):
			t.Errorf("%s: got %v, want %s", c.name, err, c.want)
		}
		// A refused head has no body read and closes its connection.
		if err != nil && (!h.ConnectionClose() || h.ContentLength() != 0) {
			t.Errorf("%s: refused, but ConnectionClose %v and ContentLength %d", c.name, h.ConnectionClose(), h.ContentLength())
		}
	}
}

func TestHTTP12IsServedAsHTTP11(t *testing.T) {
	h := parseHead(t, "GET /v1/me HTTP/1.2\r\nHost: x\r\n\r\n")
	if string(h.Protocol()) != "HTTP/1.1" || !h.IsHTTP11() {
		t.Fatalf("protocol %q after headerReceived, want HTTP/1.1", h.Protocol())
	}
	for _, proto := range []string{"HTTP/1.0", "HTTP/1.1", "HTTP/2.0", "HTTP/1.10", "HTTP/0.9"} {
		if servedAsHTTP11([]byte(proto)) {
			t.Errorf("servedAsHTTP11(%s) = true", proto)
		}
	}
}

func TestRestoreIsKnownFromTheHead(t *testing.T) {
	for _, c := range []struct {
		method, uri string
		want        bool
	}{
		{"POST", "/admin/v1/restore", true},
		{"POST", "/admin/v1/restore?x=1", true},
		{"GET", "/admin/v1/restore", false},
		{"POST", "/admin/v1/restored", false},
		{"POST", "/admin/v1/accounts", false},
	} {
		if got := isRestore([]byte(c.method), []byte(c.uri)); got != c.want {
			t.Errorf("isRestore(%s %s) = %v", c.method, c.uri, got)
		}
	}
}
