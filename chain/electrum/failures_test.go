package electrum

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/addrwatch/addrwatch/chain"
	"github.com/addrwatch/addrwatch/chain/sourcetest"
	"github.com/addrwatch/addrwatch/internal/testaddr"
)

// A server that cannot be reached, or that never answers, is down: an
// *UpstreamError, and the breaker opens.
func TestAnUnreachableOrSilentServerIsDown(t *testing.T) {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	unreachable, err := Open(chain.SourceSpec{Kind: chain.SourceElectrum, Address: addr}, chain.Reach{}, Options{Timeout: shortTimeout})
	if err != nil {
		t.Fatal(err)
	}
	if !sourcetest.BreakerOpens(t, unreachable) {
		t.Error("an unreachable server did not open the breaker")
	}
	silent := openFake(t, startFake(t, func(*fakeConn, fakeRequest) {}), Options{Timeout: shortTimeout})
	if !sourcetest.BreakerOpens(t, silent) {
		t.Error("a server that never answers did not open the breaker")
	}
}

// The caller's own deadline says nothing of the server: its error is
// the context's, and the breaker does not count it.
func TestTheCallersDeadlineIsNotTheServers(t *testing.T) {
	src := openFake(t, startFake(t, func(*fakeConn, fakeRequest) {}), Options{Timeout: time.Minute})
	ctx, cancel := context.WithTimeout(context.Background(), shortTimeout)
	defer cancel()
	_, err := src.AddressStats(ctx, testaddr.P2PKH("x"))
	var timeout timeoutError
	if !errors.Is(err, chain.ErrUpstream) || !errors.Is(err, context.DeadlineExceeded) || errors.As(err, &timeout) {
		t.Fatalf("past the caller's deadline: %v", err)
	}
}

// A line over the bound is a malformed answer: the connection is
// dropped (the stream cannot be trusted past it), the call fails, and
// the breaker does not take the server for down.
func TestALineOverTheBoundIsMalformed(t *testing.T) {
	const lineMax = 1 << 10
	huge := `"` + strings.Repeat("a", lineMax) + `"`
	f := startFake(t, func(c *fakeConn, r fakeRequest) { c.result(r, huge) })
	src := openFake(t, f, Options{})
	src.lineMax = lineMax
	_, err := src.AddressStats(context.Background(), testaddr.P2PKH("long"))
	if !errors.Is(err, chain.ErrUpstream) || !errors.Is(err, chain.ErrMalformed) || !strings.Contains(err.Error(), "over") {
		t.Fatalf("a line over the bound: %v", err)
	}
	if f.conns.Load() < 2 {
		t.Error("the connection was kept after a line over the bound")
	}
	if sourcetest.BreakerOpens(t, src) {
		t.Error("lines over the bound opened the breaker")
	}
}

// An answer to a request never made drops the connection; the request
// is asked again on a new one.
func TestAnAnswerToNoRequestDropsTheConnection(t *testing.T) {
	f := startFake(t, func(c *fakeConn, r fakeRequest) {
		c.result(fakeRequest{ID: r.ID + 1000}, "7") // on every connection
		echo(c, r)
	})
	src := openFake(t, f, Options{})
	err := src.call(context.Background(), "test.echo", []any{1}, nil)
	if !errors.Is(err, chain.ErrMalformed) || f.conns.Load() != 2 {
		t.Fatalf("answers to no request: %v after %d connections, want malformed after 2", err, f.conns.Load())
	}
}

// An error answer is the server's answer about what was asked: an
// *UpstreamError that does not open the breaker, whose message shows
// neither the address nor what the server said; unless it says the
// server is busy.
func TestAnErrorAnswerIsAboutWhatWasAsked(t *testing.T) {
	const said = "no such address bc1qsecretsecret"
	src := openFake(t, startFake(t, func(c *fakeConn, r fakeRequest) {
		c.send(`{"jsonrpc":"2.0","id":` + itoa(r.ID) + `,"error":{"code":1,"message":"` + said + `"}}`)
	}), Options{})
	addr := testaddr.P2PKH("asked")
	_, err := src.AddressStats(context.Background(), addr)
	if !errors.Is(err, chain.ErrUpstream) || !errors.Is(err, chain.ErrMalformed) {
		t.Fatalf("an error answer: %v", err)
	}
	target, _ := src.targetOf(addr)
	for _, secret := range []string{addr, target.scripthash, said} {
		if strings.Contains(err.Error(), secret) {
			t.Errorf("the error %q shows %q", err, secret)
		}
	}
	if sourcetest.BreakerOpens(t, src) {
		t.Error("error answers opened the breaker")
	}
	busy := openFake(t, startFake(t, func(c *fakeConn, r fakeRequest) {
		c.send(`{"jsonrpc":"2.0","id":` + itoa(r.ID) + `,"error":{"code":-101,"message":"excessive resource usage"}}`)
	}), Options{})
	if !sourcetest.BreakerOpens(t, busy) {
		t.Error("a server saying it is busy did not open the breaker")
	}
}

// An address with more transactions than the bound is an
// *UpstreamError saying so, never a history cut short.
func TestAnAddressOverTheBoundIsAnUpstreamError(t *testing.T) {
	entries := make([]string, 4)
	for i := range entries {
		entries[i] = `{"tx_hash":"` + strings.Repeat(strconv.Itoa(i), 64) + `","height":` + strconv.Itoa(i+1) + `}`
	}
	src := openFake(t, startFake(t, func(c *fakeConn, r fakeRequest) {
		c.result(r, "["+strings.Join(entries, ",")+"]")
	}), Options{HistoryTxsMax: 3})
	for name, read := range map[string]func() error{
		"AddressStats": func() error { _, err := src.AddressStats(context.Background(), testaddr.P2PKH("busy")); return err },
		"ChainTxs":     func() error { _, err := src.ChainTxs(context.Background(), testaddr.P2PKH("busy"), ""); return err },
		"MempoolTxs":   func() error { _, err := src.MempoolTxs(context.Background(), testaddr.P2PKH("busy")); return err },
	} {
		if err := read(); !errors.Is(err, chain.ErrUpstream) || !strings.Contains(err.Error(), "more than 3 transactions") {
			t.Errorf("%s of an address over the bound: %v", name, err)
		}
	}
}

// A transaction the server says it does not know is chain.ErrNotFound,
// in any of the words servers say it; another error is the server's.
func TestAnUnknownTransactionIsNotFound(t *testing.T) {
	said := map[string]bool{
		`{"code":2,"message":"daemon error: DaemonError({'code': -5, 'message': 'No such mempool or blockchain transaction. Use gettransaction for wallet transactions.'})"}`: true,
		`{"code":2,"message":"-5: No information available about transaction"}`:                                                                                               true,
		`{"code":1,"message":"transaction not found"}`:                                                                                                                        true,
		`{"code":2,"message":"daemon error: connection refused"}`:                                                                                                             false,
		`{"code":-32601,"message":"method not found"}`:                                                                                                                        false,
	}
	for answer, notFound := range said {
		src := openFake(t, startFake(t, func(c *fakeConn, r fakeRequest) {
			c.send(`{"jsonrpc":"2.0","id":` + itoa(r.ID) + `,"error":` + answer + `}`)
		}), Options{})
		_, err := src.Tx(context.Background(), strings.Repeat("ab", 32))
		if errors.Is(err, chain.ErrNotFound) != notFound || (!notFound && !errors.Is(err, chain.ErrUpstream)) {
			t.Errorf("after %s: %v", answer, err)
		}
	}
}
