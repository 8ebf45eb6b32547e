package forward

import (
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
