package forward

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/actors"
)

// csvPieces is a History CSV download as the leader writes it: a header
// row, then 100 pieces of 100 rows, about 1.2 MB in all, the size of an
// extended account's full history.
func csvPieces() [][]byte {
	pieces := [][]byte{[]byte("time,confirmed,block_height,txid,direction,amount_sat,fee_sat,note\r\n")}
	for p := 0; p < 100; p++ {
		var b bytes.Buffer
		for r := 0; r < 100; r++ {
			fmt.Fprintf(&b, "2024-05-01T12:%02d:%02dZ,true,%d,%064x,received,%d,0,piece %d\r\n", p%60, r%60, 840000+p, p*100+r, 1000+r, p)
		}
		pieces = append(pieces, b.Bytes())
	}
	return pieces
}

// streamCSV answers like the leader's History CSV handler: the file's
// headers, then its pieces one flush at a time; between pieces it calls
// pause.
func streamCSV(pieces [][]byte, pause func(written int)) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		ctx.SetContentType("text/csv; charset=utf-8")
		ctx.Response.Header.Set(fasthttp.HeaderContentDisposition, `attachment; filename="history.csv"`)
		ctx.SetBodyStreamWriter(func(w *bufio.Writer) {
			for i, piece := range pieces {
				if i > 0 {
					pause(i)
				}
				w.Write(piece)
				if w.Flush() != nil {
					return
				}
			}
		})
	}
}

// followerOf serves, on a loopback port, a follower that forwards every
// public request to leader.
func followerOf(t *testing.T, leader string, timeout time.Duration) string {
	t.Helper()
	f := newFollower(leaderCluster{addr: leader}, timeout)
	return serveLoopback(t, f.Handler(false, func([]byte) bool { return false }, func(ctx *fasthttp.RequestCtx) {
		t.Errorf("the follower served %s itself", ctx.Path())
	}))
}

// checkCSVHeaders fails unless resp carries the leader's status and
// headers for a download.
func checkCSVHeaders(t *testing.T, resp *fasthttp.Response) {
	t.Helper()
	if resp.StatusCode() != fasthttp.StatusOK ||
		string(resp.Header.ContentType()) != "text/csv; charset=utf-8" ||
		string(resp.Header.Peek(fasthttp.HeaderContentDisposition)) != `attachment; filename="history.csv"` {
		t.Errorf("through the follower: status %d, Content-Type %q, Content-Disposition %q; want the leader's 200 text/csv attachment",
			resp.StatusCode(), resp.Header.ContentType(), resp.Header.Peek(fasthttp.HeaderContentDisposition))
	}
}

// TestForwardedHistoryCSVStreams: a follower relays a History CSV
// download as the leader writes it. The leader holds back everything after
// its first piece until the client has that piece: a follower that read
// the whole file before answering would never send it.
func TestForwardedHistoryCSVStreams(t *testing.T) {
	pieces := csvPieces()
	for _, path := range []string{"/owner/v1/history.csv", "/downloads/history/cards/c1/transactions.csv"} {
		release := make(chan struct{})
		var once sync.Once
		releaseLeader := func() { once.Do(func() { close(release) }) }
		leader := serveLoopback(t, streamCSV(pieces, func(int) { <-release }))
		follower := followerOf(t, leader, 0)
		t.Cleanup(releaseLeader) // before the servers' shutdowns, which wait for the leader

		client := &fasthttp.HostClient{Addr: follower, StreamResponseBody: true}
		req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
		req.SetRequestURI("http://" + follower + path)
		if err := client.DoTimeout(req, resp, 5*time.Second); err != nil {
			t.Fatalf("GET %s: no answer through the follower while the leader was still writing: %v", path, err)
		}
		checkCSVHeaders(t, resp)
		first := make([]byte, len(pieces[0]))
		if _, err := io.ReadFull(resp.BodyStream(), first); err != nil || !bytes.Equal(first, pieces[0]) {
			t.Fatalf("GET %s: the first bytes through the follower: %q, %v; want the leader's first piece", path, first, err)
		}
		releaseLeader()
		rest, err := io.ReadAll(resp.BodyStream())
		if err != nil {
			t.Fatalf("GET %s: reading the rest: %v", path, err)
		}
		if want := bytes.Join(pieces[1:], nil); !bytes.Equal(rest, want) {
			t.Errorf("GET %s: the rest of the file through the follower: %d bytes, want the leader's %d", path, len(rest), len(want))
		}
		fasthttp.ReleaseResponse(resp)
		fasthttp.ReleaseRequest(req)
	}
}

// TestForwardedHistoryCSVOutlastsForwardTimeout: a download may take as
// long as the leader may take to write it, not the forwarding timeout of
// other requests, which still applies to them.
func TestForwardedHistoryCSVOutlastsForwardTimeout(t *testing.T) {
	const timeout = 50 * time.Millisecond
	pieces := csvPieces()[:5]
	csv := streamCSV(pieces, func(int) { time.Sleep(timeout) })
	leader := serveLoopback(t, func(ctx *fasthttp.RequestCtx) {
		if isDownload(ctx.Method(), ctx.RequestURI()) {
			csv(ctx)
			return
		}
		time.Sleep(3 * timeout)
		ctx.WriteString("too late")
	})
	follower := followerOf(t, leader, timeout)

	for i := 0; i < 2; i++ { // the second over the pooled node connection
		req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
		req.SetRequestURI("http://" + follower + "/owner/v1/history.csv")
		if err := fasthttp.DoTimeout(req, resp, 5*time.Second); err != nil {
			t.Fatal(err)
		}
		checkCSVHeaders(t, resp)
		if want := bytes.Join(pieces, nil); !bytes.Equal(resp.Body(), want) {
			t.Errorf("download %d, written in %v, through a follower that forwards with a %v timeout: %d bytes %.80q, want the leader's %d",
				i+1, 4*timeout, timeout, len(resp.Body()), resp.Body(), len(want))
		}
		fasthttp.ReleaseResponse(resp)
		fasthttp.ReleaseRequest(req)
	}

	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.SetRequestURI("http://" + follower + "/owner/v1/history")
	if err := fasthttp.DoTimeout(req, resp, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode() != fasthttp.StatusServiceUnavailable || !strings.Contains(string(resp.Body()), string(actors.CodeHTTPError)) {
		t.Errorf("another request slower than the forwarding timeout: %d %s, want 503 %s", resp.StatusCode(), resp.Body(), actors.CodeHTTPError)
	}
}

// TestForwardedHistoryCSVCutShort: when the leader's answer breaks off
// (the leader died mid-file), the client's download breaks off too: the
// follower never ends a relayed file as if it were complete.
func TestForwardedHistoryCSVCutShort(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				buf := make([]byte, 4096)
				conn.Read(buf) // the request head, small enough for one read
				io.WriteString(conn, "HTTP/1.1 200 OK\r\nContent-Type: text/csv\r\nTransfer-Encoding: chunked\r\n\r\n5\r\ntime,\r\n")
			}()
		}
	}()
	follower := followerOf(t, ln.Addr().String(), 0)

	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.SetRequestURI("http://" + follower + "/owner/v1/history.csv")
	client := &fasthttp.HostClient{Addr: follower, MaxIdemponentCallAttempts: 1}
	err = client.DoTimeout(req, resp, 5*time.Second)
	if err == nil && resp.StatusCode() == fasthttp.StatusOK {
		t.Errorf("a file the leader broke off arrived whole-looking through the follower: %q", resp.Body())
	}
}
