package httpd

import (
	"bufio"
	"bytes"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/httpd/admin"
	"github.com/addrwatch/addrwatch/httpd/edge"
)

// startEdgeServer serves handler through the edge on a loopback port, with
// a connection cap of capped (0: none), and returns its address.
func startEdgeServer(t *testing.T, admin bool, capped int, handler fasthttp.RequestHandler) string {
	t.Helper()
	s := &Server{log: slog.New(slog.NewTextHandler(io.Discard, nil)), connsPerClient: capped}
	srv := s.newHTTPServer("test", handler, admin)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Shutdown() })
	return ln.Addr().String()
}

// exchange sends raw and returns the first answer's status and whether
// the server then closed the connection.
func exchange(t *testing.T, addr, raw string) (status int, closed bool) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	io.WriteString(c, raw)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("%q: no answer: %v", raw, err)
	}
	io.Copy(io.Discard, resp.Body)
	// A refusal closes at once; a kept connection stays open past this.
	c.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
	_, err = br.ReadByte()
	return resp.StatusCode, err == io.EOF
}

// TestEdgeServerInProcess drives the edge's connection handling under the
// race detector: refusals close (and drain) their connection, good
// requests keep it, and the cap answers 429.
func TestEdgeServerInProcess(t *testing.T) {
	t.Parallel()
	ok := func(ctx *fasthttp.RequestCtx) {
		ctx.SetBody(ctx.PostBody())
	}
	addr := startEdgeServer(t, false, 0, ok)
	for _, c := range []struct {
		raw    string
		status int
	}{
		{"GET / HTTP/1.1\nHost: x\n\n", 400},
		{"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET / HTTP/1.1\r\n\r\n", 400},
		{"GET / HTTP/2.0\r\nHost: x\r\n\r\n", 505},
		{"GET / HTTP/1.1\r\nHost: x\r\nX: " + strings.Repeat("a", edge.ReadBufferBytes) + "\r\n\r\n", 431},
	} {
		if status, closed := exchange(t, addr, c.raw); status != c.status || !closed {
			t.Errorf("%.40q: %d, closed %v; want %d and closed", c.raw, status, closed, c.status)
		}
	}

	// Two connections held open fill the cap (of a server of its own: the
	// closes above reach this one's count a moment late); a third is
	// refused.
	addr = startEdgeServer(t, false, 2, ok)
	var held []net.Conn
	for range 2 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(5 * time.Second))
		io.WriteString(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nhi")
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("held connection: %v %v", resp, err)
		}
		held = append(held, c)
	}
	if status, closed := exchange(t, addr, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"); status != 429 || !closed {
		t.Fatalf("over the cap: %d, closed %v", status, closed)
	}
	held[0].Close()
	deadline := time.Now().Add(5 * time.Second)
	for {
		if status, _ := exchange(t, addr, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"); status == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("a closed connection did not free its place")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestAdminEdgeStreamsOnlyTheRestore checks that the admin listener reads
// every body but a restore's before the handler, within its limit, and
// leaves a restore's upload on the connection.
func TestAdminEdgeStreamsOnlyTheRestore(t *testing.T) {
	t.Parallel()
	addr := startEdgeServer(t, true, 0, func(ctx *fasthttp.RequestCtx) {
		if ctx.RequestBodyStream() != nil && string(ctx.Path()) != admin.Prefix+"/restore" {
			t.Errorf("%s reached the handler as a stream", ctx.Path())
		}
		body := io.Reader(bytes.NewReader(ctx.PostBody())) // the body read before the handler, else its stream
		if stream := ctx.RequestBodyStream(); stream != nil {
			body = stream
		}
		n, _ := io.Copy(io.Discard, body)
		ctx.SetBodyString(strings.Repeat("x", int(n)))
	})
	body := strings.Repeat("b", 40<<10)
	if status, closed := exchange(t, addr, "POST /admin/v1/accounts HTTP/1.1\r\nHost: x\r\nContent-Length: 40960\r\n\r\n"+body); status != 200 || closed {
		t.Errorf("40 KiB admin body: %d, closed %v", status, closed)
	}
	// Refused from its length, once the first byte of it is in.
	if status, closed := exchange(t, addr, "POST /admin/v1/accounts HTTP/1.1\r\nHost: x\r\nContent-Length: 70000\r\n\r\n{"); status != 422 || !closed {
		t.Errorf("70 KB admin body: %d, closed %v", status, closed)
	}
	if status, closed := exchange(t, addr, "POST /admin/v1/accounts HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n11170\r\n"+strings.Repeat("c", 70000)+"\r\n0\r\n\r\n"); status != 422 || !closed {
		t.Errorf("70 KB chunked admin body: %d, closed %v", status, closed)
	}
	// A restore's connection closes after the answer, whatever was read.
	if status, closed := exchange(t, addr, "POST /admin/v1/restore HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello"); status != 200 || !closed {
		t.Errorf("restore: %d, closed %v", status, closed)
	}
}
