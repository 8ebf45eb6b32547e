package btcdsource

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/addrwatch/addrwatch/chain"
	"github.com/addrwatch/addrwatch/chain/sourcetest"
	"github.com/addrwatch/addrwatch/internal/regtest"
)

// promptly bounds how long a call may take to fail once its connection
// dropped or its caller gave up: far below any request timeout.
const promptly = 2 * time.Second

// Many calls at once, of several methods and a batch, each get their
// own answer, and all of them go over one connection.
func TestConcurrentCallsShareOneConnection(t *testing.T) {
	n := regtest.Shared(t)
	ctx := context.Background()
	k := paidKey(t, n, 4, 2)
	direct := open(t, n, Options{})
	tip := sourcetest.Must[chain.BlockRef](t)(direct.Tip(ctx))
	var heights []int64
	wantHash := map[int64]string{}
	for h := max(0, tip.Height-40); h <= tip.Height; h++ {
		heights = append(heights, h)
		wantHash[h] = sourcetest.Must[string](t)(direct.BlockHash(ctx, h))
	}
	txs := sourcetest.Must[[]chain.Tx](t)(direct.ChainTxs(ctx, k.Address, ""))

	via := relayTo(t, n.RPC().Host)
	src := openVia(t, n, via.addr, Options{MaxConcurrent: 16})
	var wg sync.WaitGroup
	for _, h := range heights {
		wg.Go(func() {
			if got, err := src.BlockHash(ctx, h); err != nil || got != wantHash[h] {
				t.Errorf("BlockHash(%d) = %s, %v; want %s", h, got, err, wantHash[h])
			}
		})
	}
	for _, want := range txs {
		wg.Go(func() {
			// Tx sends a batch for the transactions its inputs spend from.
			if got, err := src.Tx(ctx, want.TxID); err != nil || got.TxID != want.TxID || len(got.Inputs) != len(want.Inputs) {
				t.Errorf("Tx(%s) = %s, %v", want.TxID, got.TxID, err)
			}
		})
		wg.Go(func() {
			if s, err := src.AddressStats(ctx, k.Address); err != nil || s.TxCount() != 4 {
				t.Errorf("AddressStats: %+v, %v", s, err)
			}
		})
	}
	wg.Wait()
	if got := via.accepted.Load(); got != 1 {
		t.Errorf("%d calls made %d connections to btcd, want 1", len(heights)+2*len(txs), got)
	}
}

// inFlight starts calls BlockHash calls on src, and returns once btcd
// has all of them, with their errors to come.
func inFlight(t *testing.T, src *Source, sent *requestCounter, calls int) <-chan error {
	t.Helper()
	errs := make(chan error, calls)
	for range calls {
		go func() {
			_, err := src.BlockHash(context.Background(), 0)
			errs <- err
		}()
	}
	deadline := time.Now().Add(promptly)
	for sent.total() < calls {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d calls sent", sent.total(), calls)
		}
		time.Sleep(time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond) // for the requests to reach btcd
	return errs
}

// The connection dropped, the calls waiting for their answers fail at
// once, each naming its method and saying why, and the next call dials
// again and is answered.
func TestADroppedConnectionFailsTheCallsInFlight(t *testing.T) {
	n := regtest.Shared(t)
	via := relayTo(t, n.RPC().Host)
	src := openVia(t, n, via.addr, Options{Timeout: time.Minute})
	sourcetest.Must[chain.BlockRef](t)(src.Tip(context.Background()))
	sent := countRequests(src)
	via.hold(true)
	errs := inFlight(t, src, sent, 3)
	via.cut()
	deadline := time.After(promptly)
	for range 3 {
		select {
		case err := <-errs:
			var ue *chain.UpstreamError
			if !errors.As(err, &ue) || ue.Status != 0 || !errors.Is(err, errConnectionLost) || !strings.Contains(err.Error(), "getblockhash") {
				t.Errorf("a call in flight when the connection dropped: %v, want the connection lost, naming getblockhash", err)
			}
		case <-deadline:
			t.Fatalf("calls in flight still wait %s after their connection dropped", promptly)
		}
	}
	via.hold(false)
	if _, err := src.BlockHash(context.Background(), 0); err != nil {
		t.Fatalf("the call after the drop: %v", err)
	}
	if got := via.accepted.Load(); got != 2 {
		t.Errorf("%d connections, want 2: the first, and the one after the drop", got)
	}
}

// A caller that gives up gets its answer at once, and the connection
// stays for the next call, which gets its own answer (not the late one).
func TestACancelledCallReturnsAtOnce(t *testing.T) {
	n := regtest.Shared(t)
	via := relayTo(t, n.RPC().Host)
	src := openVia(t, n, via.addr, Options{Timeout: time.Minute})
	ctx := context.Background()
	tip := sourcetest.Must[chain.BlockRef](t)(src.Tip(ctx))
	via.hold(true)
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		_, err := src.BlockHash(cctx, 0)
		done <- err
	}()
	time.Sleep(100 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) || !errors.Is(err, chain.ErrUpstream) {
			t.Errorf("a cancelled call: %v, want context.Canceled in an UpstreamError", err)
		}
	case <-time.After(promptly):
		t.Fatal("a cancelled call still waits")
	}
	via.hold(false)
	if hash, err := src.BlockHash(ctx, tip.Height); err != nil || hash != tip.Hash {
		t.Errorf("the call after: %s, %v; want the tip's hash %s", hash, err, tip.Hash)
	}
	if got := via.accepted.Load(); got != 1 {
		t.Errorf("%d connections, want 1", got)
	}
}

// A request that btcd leaves unanswered past the timeout, with no word
// from btcd meanwhile, is a timeout, and the connection is taken for
// lost: the next call dials again rather than wait on it.
func TestASilentConnectionIsDroppedAtTheTimeout(t *testing.T) {
	n := regtest.Shared(t)
	via := relayTo(t, n.RPC().Host)
	src := openVia(t, n, via.addr, Options{Timeout: 300 * time.Millisecond})
	sourcetest.Must[chain.BlockRef](t)(src.Tip(context.Background()))
	via.hold(true)
	_, err := src.BlockHash(context.Background(), 0)
	if slow := (timeoutError{}); !errors.As(err, &slow) {
		t.Fatalf("a call btcd does not answer: %v, want a timeout", err)
	}
	via.hold(false)
	if _, err := src.BlockHash(context.Background(), 0); err != nil {
		t.Fatalf("the call after: %v", err)
	}
	if got := via.accepted.Load(); got != 2 {
		t.Errorf("%d connections, want 2", got)
	}
}

// An answer over the bound fails its own call as malformed (the breaker
// stays closed), not the connection: the next call is answered on it.
func TestAnOversizedAnswerIsRefused(t *testing.T) {
	n := regtest.Shared(t)
	k := paidKey(t, n, 6, 6)
	via := relayTo(t, n.RPC().Host)
	src := openVia(t, n, via.addr, Options{})
	src.rpc.answerBytesMax = 4 << 10 // six transactions in JSON are more
	ctx := context.Background()
	_, err := src.AddressStats(ctx, k.Address)
	var ue *chain.UpstreamError
	if !errors.As(err, &ue) || ue.Status != 200 || !strings.Contains(err.Error(), "over 4096 bytes") {
		t.Fatalf("an answer over the bound: %v, want it refused as malformed", err)
	}
	if _, err := src.Tip(ctx); err != nil {
		t.Fatalf("the call after: %v", err)
	}
	if got := via.accepted.Load(); got != 1 {
		t.Errorf("%d connections, want 1", got)
	}
}

// trailingID finds the ID where btcd puts it, last, and nothing in a
// notification or anything else.
func TestTrailingID(t *testing.T) {
	for msg, want := range map[string]int64{
		`{"result":"ab","error":null,"id":7}`:                                       7,
		`{"jsonrpc":"2.0","result":1,"error":null,"id" : 42 } ` + "\n":              42,
		`[{"result":1,"error":null,"id":3},{"result":2,"error":null,"id":4}]`:       4,
		`{"jsonrpc":"1.0","method":"relevanttxaccepted","params":["00"],"id":null}`: -1,
		`{"result":{"id":5},"error":null}`:                                          -1,
		`{"result":"x","id":"7"}`:                                                   -1,
		`{"result":"x","id":}`:                                                      -1,
		`id":8}`:                                                                    -1,
		``:                                                                          -1,
	} {
		id, ok := trailingID([]byte(msg))
		if ok != (want >= 0) || (ok && int64(id) != want) {
			t.Errorf("trailingID(%s) = %d, %v; want %d", msg, id, ok, want)
		}
	}
}

// keepTail keeps the last tailBytes, whatever the chunks.
func TestKeepTail(t *testing.T) {
	msg := strings.Repeat("x", 1000) + `,"error":null,"id":123456789}`
	for _, chunk := range []int{1, 7, 64, 65, 500} {
		var tail []byte
		for i := 0; i < len(msg); i += chunk {
			tail = keepTail(tail, []byte(msg[i:min(i+chunk, len(msg))]))
		}
		if string(tail) != msg[len(msg)-tailBytes:] {
			t.Errorf("chunks of %d: %q", chunk, tail)
		}
	}
}
