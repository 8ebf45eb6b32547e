package forward

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

// countingListener counts the connections it accepts.
type countingListener struct {
	net.Listener
	accepted atomic.Int64
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.accepted.Add(1)
	}
	return c, err
}

// framedLeader serves h as a leader serves forwarded requests, on a
// loopback HTTP listener and a framed one, and returns a follower's view
// of it, the framed listener and its server.
func framedLeader(t *testing.T, h fasthttp.RequestHandler) (leaderCluster, *countingListener, *FramedServer) {
	t.Helper()
	return framedLeaderWith(t, h, frameBytesMax)
}

// framedLeaderWith is framedLeader with answers over answerMax bytes
// refused.
func framedLeaderWith(t *testing.T, h fasthttp.RequestHandler, answerMax int) (leaderCluster, *countingListener, *FramedServer) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	frames := &countingListener{Listener: ln}
	fs := newTestFramedServer(Receive(h))
	fs.answerMax = answerMax
	go fs.Serve(frames)
	t.Cleanup(func() { ln.Close(); fs.Close() })
	return leaderCluster{addr: serveLoopback(t, Receive(h)), frames: ln.Addr().String()}, frames, fs
}

// framedFollowerOf serves, on a loopback listener, a follower that
// forwards every request to the leader of c.
func framedFollowerOf(t *testing.T, c leaderCluster, timeout time.Duration) string {
	t.Helper()
	f := newFollower(c, timeout)
	return serveLoopback(t, IgnoreNodeHeaders(f.Handler(false, func([]byte) bool { return false }, seenBy)))
}

func do(t *testing.T, method, url, body string, headers ...string) *fasthttp.Response {
	t.Helper()
	req := fasthttp.AcquireRequest()
	defer fasthttp.ReleaseRequest(req)
	req.Header.SetMethod(method)
	req.SetRequestURI(url)
	req.SetBodyString(body)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp := &fasthttp.Response{}
	if method == fasthttp.MethodHead {
		resp.SkipBody = true
	}
	if err := fasthttp.DoTimeout(req, resp, 10*time.Second); err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	return resp
}

// TestFramedForwardingAnswersEachRequestItsOwn: many requests in flight at
// once share one framed connection, answers come back in another order
// than the requests went out, and each client gets its own.
func TestFramedForwardingAnswersEachRequestItsOwn(t *testing.T) {
	echo := func(ctx *fasthttp.RequestCtx) {
		// Later requests are answered first.
		n := 0
		fmt.Sscan(string(ctx.PostBody()), &n)
		time.Sleep(time.Duration(50-n%50) * time.Millisecond)
		ctx.SetStatusCode(fasthttp.StatusCreated)
		ctx.Response.Header.Set("Location", "/v1/things/"+string(ctx.PostBody()))
		fmt.Fprintf(ctx, "%s %s %s", ctx.Method(), ctx.Path(), ctx.PostBody())
	}
	c, frames, _ := framedLeader(t, echo)
	follower := framedFollowerOf(t, c, 0)

	const requests = 200
	var wg sync.WaitGroup
	errs := make(chan string, requests)
	for i := range requests {
		wg.Go(func() {
			body := fmt.Sprint(i)
			resp := do(t, fasthttp.MethodPost, fmt.Sprintf("http://%s/v1/things/%d", follower, i), body)
			want := fmt.Sprintf("POST /v1/things/%d %d", i, i)
			if resp.StatusCode() != fasthttp.StatusCreated || string(resp.Body()) != want || string(resp.Header.Peek("Location")) != "/v1/things/"+body {
				errs <- fmt.Sprintf("request %d: %d %q (Location %q), want 201 %q", i, resp.StatusCode(), resp.Body(), resp.Header.Peek("Location"), want)
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if n := frames.accepted.Load(); n != 1 {
		t.Errorf("the follower opened %d framed connections for %d requests, want 1", n, requests)
	}
}

// TestFramedForwardingKeepsTheAnswer: what a client sees through a
// follower is what the leader answered: status, headers, cookies, a HEAD
// answer's length without its body, and the client the follower saw.
func TestFramedForwardingKeepsTheAnswer(t *testing.T) {
	h := func(ctx *fasthttp.RequestCtx) {
		if string(ctx.Path()) == "/who" {
			seenBy(ctx)
			return
		}
		var cookie fasthttp.Cookie
		cookie.SetKey("addrwatch_session")
		cookie.SetValue("s3cr3t")
		cookie.SetHTTPOnly(true)
		ctx.Response.Header.SetCookie(&cookie)
		ctx.Response.Header.Set("Retry-After", "7")
		ctx.SetContentType("application/json")
		ctx.SetStatusCode(fasthttp.StatusTooManyRequests)
		ctx.SetBodyString(`{"code":"RATE_LIMITED","error":"slow down"}`)
	}
	c, frames, _ := framedLeader(t, h)
	follower := framedFollowerOf(t, c, 0)

	resp := do(t, fasthttp.MethodGet, "http://"+follower+"/v1/me", "")
	if resp.StatusCode() != fasthttp.StatusTooManyRequests || string(resp.Body()) != `{"code":"RATE_LIMITED","error":"slow down"}` ||
		string(resp.Header.Peek("Retry-After")) != "7" || string(resp.Header.ContentType()) != "application/json" {
		t.Errorf("GET: %d %q Retry-After %q Content-Type %q", resp.StatusCode(), resp.Body(), resp.Header.Peek("Retry-After"), resp.Header.ContentType())
	}
	if cookie := string(resp.Header.PeekCookie("addrwatch_session")); !strings.Contains(cookie, "s3cr3t") || !strings.Contains(strings.ToLower(cookie), "httponly") {
		t.Errorf("the session cookie came through as %q", cookie)
	}

	head := do(t, fasthttp.MethodHead, "http://"+follower+"/v1/me", "")
	if head.StatusCode() != fasthttp.StatusTooManyRequests || head.Header.ContentLength() != len(`{"code":"RATE_LIMITED","error":"slow down"}`) || len(head.Body()) != 0 {
		t.Errorf("HEAD: %d, Content-Length %d, body %q", head.StatusCode(), head.Header.ContentLength(), head.Body())
	}

	who := do(t, fasthttp.MethodGet, "http://"+follower+"/who", "", "X-Forwarded-For", "198.51.100.7", clientIPHeader, "192.0.2.66")
	if want := "198.51.100.7|forwarded||"; string(who.Body()) != want {
		t.Errorf("the leader saw %q through the framed connection, want %q", who.Body(), want)
	}
	if n := frames.accepted.Load(); n != 1 {
		t.Errorf("%d framed connections, want 1", n)
	}
}

// TestForwardingToALeaderWithoutFrames: a leader that refuses framed
// connections, as one of an older version does, is still reached, one
// request per connection.
func TestForwardingToALeaderWithoutFrames(t *testing.T) {
	c := leaderCluster{addr: serveLoopback(t, Receive(seenBy))}
	follower := framedFollowerOf(t, c, 0)
	for range 3 {
		resp := do(t, fasthttp.MethodGet, "http://"+follower+"/v1/me", "")
		if want := "127.0.0.1|forwarded||"; resp.StatusCode() != fasthttp.StatusOK || string(resp.Body()) != want {
			t.Errorf("through a leader without frames: %d %q, want 200 %q", resp.StatusCode(), resp.Body(), want)
		}
	}
}

// TestFramedConnectionLostFailsTheRequestsInFlight: when the framed
// connection breaks while the leader serves a request, the client hears
// that the outcome is unknown, at once, and the request is not sent a
// second time; the next request opens a new connection.
func TestFramedConnectionLostFailsTheRequestsInFlight(t *testing.T) {
	var served atomic.Int64
	release := make(chan struct{})
	entered := make(chan struct{}, 1)
	h := func(ctx *fasthttp.RequestCtx) {
		served.Add(1)
		if string(ctx.Path()) == "/slow" {
			entered <- struct{}{}
			<-release
		}
		ctx.SetBodyString("done")
	}
	c, frames, fs := framedLeader(t, h)
	follower := framedFollowerOf(t, c, 0)

	answered := make(chan *fasthttp.Response, 1)
	go func() { answered <- do(t, fasthttp.MethodPut, "http://"+follower+"/slow", "x") }()
	<-entered
	fs.closeConns()
	var resp *fasthttp.Response
	select {
	case resp = <-answered:
	case <-time.After(5 * time.Second):
		close(release)
		t.Fatal("the request waited on a lost connection")
	}
	close(release)
	if resp.StatusCode() != fasthttp.StatusServiceUnavailable || !strings.Contains(string(resp.Body()), "may or may not have been applied") {
		t.Errorf("a request whose connection was lost: %d %q, want 503 saying its outcome is unknown", resp.StatusCode(), resp.Body())
	}
	if n := served.Load(); n != 1 {
		t.Errorf("the leader served the request %d times, want once", n)
	}
	if resp := do(t, fasthttp.MethodGet, "http://"+follower+"/v1/me", ""); string(resp.Body()) != "done" {
		t.Errorf("the next request: %d %q", resp.StatusCode(), resp.Body())
	}
	if n := frames.accepted.Load(); n != 2 {
		t.Errorf("%d framed connections, want 2 (the lost one and its successor)", n)
	}
}

// TestFramedAnswerTimesOut: an answer that takes longer than the forward
// timeout is given up on, with the outcome unknown.
func TestFramedAnswerTimesOut(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	c, frames, _ := framedLeader(t, func(ctx *fasthttp.RequestCtx) { <-release })
	follower := framedFollowerOf(t, c, 200*time.Millisecond)
	resp := do(t, fasthttp.MethodPut, "http://"+follower+"/v1/slow", "x")
	if resp.StatusCode() != fasthttp.StatusServiceUnavailable || !strings.Contains(string(resp.Body()), "may or may not have been applied") {
		t.Errorf("a request the leader did not answer in time: %d %q", resp.StatusCode(), resp.Body())
	}
	// The connection that timed out is not used again: a leader gone
	// without a word would otherwise take every later request with it.
	do(t, fasthttp.MethodPut, "http://"+follower+"/v1/slow", "x")
	if n := frames.accepted.Load(); n != 2 {
		t.Errorf("%d framed connections after two timeouts, want 2 (a new one after the first)", n)
	}
}

// TestFramedAnswerTooLargeFailsAlone: an answer over the frame limit is
// replaced by an error on the leader, rather than sent and refused by the
// follower, which would drop the connection and every other request on
// it. The test lowers the limit on the leader's side only.
func TestFramedAnswerTooLargeFailsAlone(t *testing.T) {
	entered := make(chan struct{})
	release := make(chan struct{})
	h := func(ctx *fasthttp.RequestCtx) {
		switch string(ctx.Path()) {
		case "/big":
			<-entered
			ctx.SetBodyString(strings.Repeat("x", 8<<10))
			close(release)
		case "/slow":
			close(entered)
			<-release
			ctx.SetBodyString("slow done")
		}
	}
	c, frames, _ := framedLeaderWith(t, h, 4<<10)
	follower := framedFollowerOf(t, c, 0)
	slow := make(chan *fasthttp.Response, 1)
	go func() { slow <- do(t, fasthttp.MethodGet, "http://"+follower+"/slow", "") }()
	big := do(t, fasthttp.MethodGet, "http://"+follower+"/big", "")
	if big.StatusCode() != fasthttp.StatusServiceUnavailable || !strings.Contains(string(big.Body()), "too large") {
		t.Errorf("an answer over the frame limit: %d %.100q", big.StatusCode(), big.Body())
	}
	if r := <-slow; string(r.Body()) != "slow done" {
		t.Errorf("the request sharing the connection: %d %q", r.StatusCode(), r.Body())
	}
	if n := frames.accepted.Load(); n != 1 {
		t.Errorf("%d framed connections, want 1: the large answer dropped the connection", n)
	}
}

// FuzzFramedRequest: whatever bytes arrive on a framed connection, the
// leader reads frames without panicking or allocating past the frame
// limit, and answers each frame with a well-formed HTTP answer (a 4xx for
// a request it cannot read).
func FuzzFramedRequest(f *testing.F) {
	req := fasthttp.AcquireRequest()
	req.Header.SetMethod(fasthttp.MethodPut)
	req.SetRequestURI("http://127.0.0.1/v1/spaces/s1/sheet")
	req.SetBodyString(`{"cells":["a","b","","",""]}`)
	good, err := encodeFrame(req.Write)
	if err != nil {
		f.Fatal(err)
	}
	framed := func(data []byte) []byte {
		head := make([]byte, frameHeadBytes)
		binary.BigEndian.PutUint32(head[:4], 7)
		binary.BigEndian.PutUint32(head[4:], uint32(len(data)))
		return append(head, data...)
	}
	f.Add(framed(good))
	f.Add(framed([]byte("GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 99\r\n\r\nshort")))
	f.Add(framed([]byte("GET / HTTP/1.1\nHost: x\n\n")))
	f.Add([]byte{0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff})
	fs := newTestFramedServer(Receive(func(ctx *fasthttp.RequestCtx) { ctx.SetBody(ctx.PostBody()) }))
	conn, peer := net.Pipe()
	defer conn.Close()
	defer peer.Close()
	f.Fuzz(func(t *testing.T, data []byte) {
		br := bufio.NewReader(bytes.NewReader(data))
		for {
			fr, err := readFrame(br)
			if err != nil {
				return
			}
			answer, err := fs.serve(conn, fr.data)
			if err != nil {
				t.Fatalf("serve: %v", err)
			}
			var resp fasthttp.Response
			if err := parseFrame(answer, func(br *bufio.Reader) error { return resp.Read(br) }); err != nil {
				t.Fatalf("the answer does not parse: %v\n%q", err, answer)
			}
		}
	})
}

// TestFramedRequestWithExpectContinue: a client that asked for
// 100-continue has sent its body to the follower; the leader serves the
// request with that body rather than waiting for one.
func TestFramedRequestWithExpectContinue(t *testing.T) {
	c, _, _ := framedLeader(t, func(ctx *fasthttp.RequestCtx) { ctx.SetBody(ctx.PostBody()) })
	follower := framedFollowerOf(t, c, 0)
	resp := do(t, fasthttp.MethodPut, "http://"+follower+"/v1/echo", `{"cells":["a"]}`, "Expect", "100-continue")
	if resp.StatusCode() != fasthttp.StatusOK || string(resp.Body()) != `{"cells":["a"]}` {
		t.Errorf("a request sent with Expect: 100-continue reached the leader as %d %q", resp.StatusCode(), resp.Body())
	}
}

// A frame that still says Expect: 100-continue (from a follower that
// keeps the header) is served with its body.
func TestFramedServerReadsTheBodyBehindExpectContinue(t *testing.T) {
	fs := newTestFramedServer(func(ctx *fasthttp.RequestCtx) { ctx.SetBody(ctx.PostBody()) })
	conn, peer := net.Pipe()
	defer conn.Close()
	defer peer.Close()
	answer, err := fs.serve(conn, []byte("PUT /v1/echo HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\nhello"))
	if err != nil {
		t.Fatal(err)
	}
	var resp fasthttp.Response
	if err := parseFrame(answer, func(br *bufio.Reader) error { return resp.Read(br) }); err != nil || string(resp.Body()) != "hello" {
		t.Errorf("answer %q (%v), want the body hello echoed", answer, err)
	}
}

// get10 sends an HTTP/1.0 request without a Host header, which the edge
// accepts, and returns the answer's body.
func get10(t *testing.T, addr string) string {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write([]byte("GET /v1/me HTTP/1.0\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	var resp fasthttp.Response
	if err := resp.Read(bufio.NewReader(c)); err != nil {
		t.Fatal(err)
	}
	return string(resp.Body())
}

// TestForwardingAnHTTP10RequestWithoutHost: such a request reaches the
// leader through a follower, framed or not, instead of failing for the
// Host header the hop needs.
func TestForwardingAnHTTP10RequestWithoutHost(t *testing.T) {
	framed, _, _ := framedLeader(t, seenBy)
	relayed := leaderCluster{addr: serveLoopback(t, Receive(seenBy))}
	for name, c := range map[string]leaderCluster{"framed": framed, "one per connection": relayed} {
		if got, want := get10(t, framedFollowerOf(t, c, 0)), "127.0.0.1|forwarded||"; got != want {
			t.Errorf("%s: the leader answered %q, want %q", name, got, want)
		}
	}
}
