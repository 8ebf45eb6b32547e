package forward

import (
	"bufio"
	"net"
	"testing"

	"github.com/valyala/fasthttp"
)

// TestReceiveNamesEachRequestsOwnClient: the requests of one keep-alive
// node connection share their fasthttp context, so the client one request
// named must not stay on for the next, which names none (an older
// follower's) or another. Each sees its own, and its scheme.
func TestReceiveNamesEachRequestsOwnClient(t *testing.T) {
	var conns []uint64
	leader := serveLoopback(t, Receive(func(ctx *fasthttp.RequestCtx) {
		conns = append(conns, ctx.ConnID())
		https, _ := Scheme(ctx)
		ctx.WriteString(ctx.RemoteIP().String() + "|" + clientProto(https))
	}))
	for _, step := range []struct{ ip, proto, want string }{
		{"198.51.100.7", "https", "198.51.100.7|https"},
		{"", "", "127.0.0.1|http"},
		{"2001:db8::1", "http", "2001:db8::1|http"},
		{"not an address", "https", "127.0.0.1|https"},
	} {
		var headers []string
		if step.ip != "" {
			headers = append(headers, clientIPHeader, step.ip)
		}
		if step.proto != "" {
			headers = append(headers, clientProtoHeader, step.proto)
		}
		if got := string(do(t, fasthttp.MethodGet, "http://"+leader+"/who", "", headers...).Body()); got != step.want {
			t.Errorf("named %q over %q: the handler saw %q, want %q", step.ip, step.proto, got, step.want)
		}
	}
	for _, c := range conns[1:] {
		if c != conns[0] {
			t.Fatalf("the requests came on connections %v, not one keep-alive connection: the test proves nothing", conns)
		}
	}
}

// A client's own node headers mean nothing on a listener clients reach,
// whatever the case of their names and wherever they stand in the head;
// the name only counts at the start of a line (a value that mentions it
// is no node header, and is left alone).
func TestIgnoreNodeHeadersInAnyCase(t *testing.T) {
	public := serveLoopback(t, IgnoreNodeHeaders(func(ctx *fasthttp.RequestCtx) {
		_, forwarded := Scheme(ctx)
		ctx.WriteString(boolWord(forwarded) + "|" + string(ctx.Request.Header.Peek(clientIPHeader)) + "|" + string(ctx.Request.Header.Peek("X-Note")))
	}))
	for _, head := range []string{
		"x-addrwatch-client-ip: 192.0.2.66\r\nx-addrwatch-client-proto: https\r\nHost: h\r\n",
		"X-ADDRWATCH-CLIENT-PROTO: https\r\nHost: h\r\n",
		"Host: h\r\nX-AddrWatch-Client-Proto: https\r\nX-Addrwatch-Client-IP: 192.0.2.66\r\n",
	} {
		if got := rawGet(t, public, head); got != "direct||" {
			t.Errorf("head %q: the handler saw %q, want no node header", head, got)
		}
	}
	if got := rawGet(t, public, "Host: h\r\nX-Note: X-Addrwatch-Client-Proto: https\r\n"); got != "direct||X-Addrwatch-Client-Proto: https" {
		t.Errorf("a value naming a node header: the handler saw %q", got)
	}
}

// rawGet sends GET / with head (header lines, each ending in CRLF) as it
// is, names in the case given, and returns the answer's body.
func rawGet(t *testing.T, addr, head string) string {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte("GET / HTTP/1.1\r\n" + head + "Connection: close\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	var resp fasthttp.Response
	if err := resp.Read(bufio.NewReader(conn)); err != nil {
		t.Fatal(err)
	}
	return string(resp.Body())
}
