package electrum

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/addrwatch/addrwatch/chain"
)

// shortTimeout is the per-request timeout of tests whose server stays
// silent: long enough for loopback, short enough to wait out.
const shortTimeout = 300 * time.Millisecond

// echo answers a request of test.echo with its first param.
func echo(c *fakeConn, r fakeRequest) {
	var params []json.RawMessage
	_ = json.Unmarshal(r.Params, &params)
	c.result(r, string(params[0]))
}

// Answers are matched to requests by ID, whatever order the server
// sends them in.
func TestAnswersAreMatchedByIDInAnyOrder(t *testing.T) {
	const calls = 4
	var held []fakeRequest
	f := startFake(t, func(c *fakeConn, r fakeRequest) {
		if held = append(held, r); len(held) < calls {
			return
		}
		for i := len(held) - 1; i >= 0; i-- { // all asked: answered last first
			echo(c, held[i])
		}
	})
	src := openFake(t, f, Options{})
	got := make(chan [2]int, calls)
	for i := range calls {
		go func() {
			n := -1
			if err := src.call(context.Background(), "test.echo", []any{i}, &n); err != nil {
				t.Error(err)
			}
			got <- [2]int{i, n}
		}()
	}
	for range calls {
		if g := <-got; g[0] != g[1] {
			t.Errorf("call %d got the answer %d", g[0], g[1])
		}
	}
	if n := f.conns.Load(); n != 1 {
		t.Errorf("%d connections, want one for every call", n)
	}
}

// A request the server does not answer in time fails as the server's
// fault (not the caller's deadline), and a connection on which nothing
// came since is dropped: the next call connects again.
func TestASilentServerTimesOut(t *testing.T) {
	var asked atomic.Int32
	f := startFake(t, func(c *fakeConn, r fakeRequest) {
		if asked.Add(1) > 1 { // the first request is not answered
			echo(c, r)
		}
	})
	src := openFake(t, f, Options{Timeout: shortTimeout})
	err := src.call(context.Background(), "test.echo", []any{1}, nil)
	var timeout timeoutError
	if !errors.As(err, &timeout) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, chain.ErrMalformed) {
		t.Fatalf("a silent server: %v, want a timeout that is the server's", err)
	}
	var n int
	if err := src.call(context.Background(), "test.echo", []any{2}, &n); err != nil || n != 2 {
		t.Fatalf("the next call: %d, %v", n, err)
	}
	if c := f.conns.Load(); c != 2 {
		t.Errorf("%d connections, want the stalled one dropped and another made", c)
	}
}

// An answer that comes after its request gave up is dropped, and the
// connection goes on: something else came since the request went out,
// so the connection is not stalled.
func TestALateAnswerIsDropped(t *testing.T) {
	held := make(chan fakeRequest, 1)
	f := startFake(t, func(c *fakeConn, r fakeRequest) {
		var params []int
		_ = json.Unmarshal(r.Params, &params)
		switch params[0] {
		case 1:
			held <- r
		case 2:
			echo(c, r)
		case 3:
			c.result(<-held, "1") // the late answer first
			echo(c, r)
		}
	})
	src := openFake(t, f, Options{Timeout: shortTimeout})
	first := make(chan error, 1)
	go func() { first <- src.call(context.Background(), "test.echo", []any{1}, nil) }()
	r := <-held // the first request is out; the second goes after it
	held <- r
	var n int
	if err := src.call(context.Background(), "test.echo", []any{2}, &n); err != nil || n != 2 {
		t.Fatalf("the second call: %d, %v", n, err)
	}
	var timeout timeoutError
	if err := <-first; !errors.As(err, &timeout) {
		t.Fatalf("the held call: %v, want a timeout", err)
	}
	if err := src.call(context.Background(), "test.echo", []any{3}, &n); err != nil || n != 3 {
		t.Fatalf("after a late answer: %d, %v", n, err)
	}
	if c := f.conns.Load(); c != 1 {
		t.Errorf("%d connections, want the one kept", c)
	}
}

// A connection that asks nothing for a while pings the server, which
// would drop a session idle for long.
func TestAnIdleConnectionPings(t *testing.T) {
	pinged := make(chan struct{}, 1)
	f := startFake(t, func(c *fakeConn, r fakeRequest) {
		if r.Method == "server.ping" {
			c.result(r, "null")
			select {
			case pinged <- struct{}{}:
			default:
			}
		}
	})
	src := openFake(t, f, Options{})
	src.pingEvery = 20 * time.Millisecond
	if _, err := src.session(context.Background()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-pinged:
	case <-time.After(10 * time.Second):
		t.Fatal("an idle connection never pinged")
	}
}
