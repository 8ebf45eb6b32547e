package chain

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeEsplora is a small Esplora-shaped server for the client and cache
// tests: histories are set by the test, every request is counted by kind,
// the requests in flight are tracked, and a hook can answer in its place.
type fakeEsplora struct {
	srv *httptest.Server

	mu          sync.Mutex
	chain       map[string][]esploraTx // newest first
	mempool     map[string][]esploraTx
	calls       map[string]int // "address", "chain", "mempool", "tx"
	cursors     []string       // last_seen txids asked for, in order
	requests    int            // every request, the hook's included
	inFlight    int
	maxInFlight int
	// hook, when set, sees each request first; returning true means it
	// answered.
	hook func(w http.ResponseWriter, r *http.Request) bool
}

func newFakeEsplora(t *testing.T) *fakeEsplora {
	t.Helper()
	f := &fakeEsplora{
		chain:   make(map[string][]esploraTx),
		mempool: make(map[string][]esploraTx),
		calls:   make(map[string]int),
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /address/{addr}", f.handleAddress)
	mux.HandleFunc("GET /address/{addr}/txs/chain", f.handleChain)
	mux.HandleFunc("GET /address/{addr}/txs/chain/{last}", f.handleChain)
	mux.HandleFunc("GET /address/{addr}/txs/mempool", f.handleMempool)
	mux.HandleFunc("GET /tx/{txid}", f.handleTx)
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.requests++
		f.inFlight++
		f.maxInFlight = max(f.maxInFlight, f.inFlight)
		hook := f.hook
		f.mu.Unlock()
		defer func() {
			f.mu.Lock()
			f.inFlight--
			f.mu.Unlock()
		}()
		if hook != nil && hook(w, r) {
			return
		}
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

// client returns a Client for the fake whose backoff sleeps are recorded
// instead of waited out.
func (f *fakeEsplora) client(t *testing.T, opts ClientOptions) (*Client, *[]time.Duration) {
	t.Helper()
	c, err := NewClient(f.srv.URL+"/", opts)
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu     sync.Mutex
		sleeps []time.Duration
	)
	c.sleep = func(_ context.Context, d time.Duration) error {
		mu.Lock()
		defer mu.Unlock()
		sleeps = append(sleeps, d)
		return nil
	}
	return c, &sleeps
}

func (f *fakeEsplora) setHook(h func(w http.ResponseWriter, r *http.Request) bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.hook = h
}

func (f *fakeEsplora) count(kind string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[kind]
}

func (f *fakeEsplora) requestCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.requests
}

// setHistory gives addr confirmed transactions 0..n-1 (n-1 newest) and
// mempool transactions 0..m-1, all paying addr.
func (f *fakeEsplora) setHistory(addr string, n, m int) {
	chain := make([]esploraTx, n)
	for i := range n {
		chain[n-1-i] = fakeTx(addr, fmt.Sprintf("c%d", i), int64(100_000+i))
	}
	mempool := make([]esploraTx, m)
	for j := range m {
		mempool[m-1-j] = fakeTx(addr, fmt.Sprintf("m%d", j), -1)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.chain[addr], f.mempool[addr] = chain, mempool
}

// pushConfirmed adds new confirmed transactions on top of addr's history.
func (f *fakeEsplora) pushConfirmed(addr string, names ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	top := int64(200_000)
	if len(f.chain[addr]) > 0 {
		top = *f.chain[addr][0].Status.BlockHeight
	}
	for _, name := range names {
		top++
		f.chain[addr] = append([]esploraTx{fakeTx(addr, name, top)}, f.chain[addr]...)
	}
}

// replaceTop swaps addr's newest confirmed transaction for another (a reorg).
func (f *fakeEsplora) replaceTop(addr, name string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.chain[addr][0] = fakeTx(addr, name, *f.chain[addr][0].Status.BlockHeight)
}

// listing returns addr's confirmed history as the domain type.
func (f *fakeEsplora) listing(t *testing.T, addr string) []Tx {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]Tx, 0, len(f.chain[addr]))
	for _, w := range f.chain[addr] {
		tx, err := w.toTx()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, tx)
	}
	return out
}

// fakeTx is a payment to addr; height < 0 makes it unconfirmed.
func fakeTx(addr, name string, height int64) esploraTx {
	sum := sha256.Sum256([]byte(addr + "|" + name))
	w := esploraTx{
		TxID: hex.EncodeToString(sum[:]),
		Vin:  []esploraVin{{TxID: strings.Repeat("ab", 32), Prevout: &esploraTxOut{ScriptPubKeyAddress: "1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2", Value: 10_500}}},
		Vout: []esploraTxOut{{ScriptPubKeyAddress: addr, Value: 10_000}},
		Fee:  500,
	}
	if height >= 0 {
		bt := 1_600_000_000 + height*600
		w.Status = esploraStatus{Confirmed: true, BlockHeight: &height, BlockTime: &bt}
	}
	return w
}

func (f *fakeEsplora) note(kind string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls[kind]++
}

func (f *fakeEsplora) handleAddress(w http.ResponseWriter, r *http.Request) {
	f.note("address")
	addr := r.PathValue("addr")
	f.mu.Lock()
	out := esploraAddress{
		Address:      addr,
		ChainStats:   simStats(addr, f.chain[addr]),
		MempoolStats: simStats(addr, f.mempool[addr]),
	}
	f.mu.Unlock()
	writeFakeJSON(w, out)
}

func (f *fakeEsplora) handleChain(w http.ResponseWriter, r *http.Request) {
	f.note("chain")
	addr, last := r.PathValue("addr"), r.PathValue("last")
	f.mu.Lock()
	all := f.chain[addr]
	from := 0
	if last != "" {
		f.cursors = append(f.cursors, last)
		// Like electrs: the page after last_seen, or [] when it is not
		// in the history.
		from = slices.IndexFunc(all, func(t esploraTx) bool { return t.TxID == last }) + 1
		if from == 0 {
			from = len(all)
		}
	}
	page := slices.Clone(all[from:min(from+ChainPageSize, len(all))])
	f.mu.Unlock()
	if page == nil {
		page = []esploraTx{}
	}
	writeFakeJSON(w, page)
}

func (f *fakeEsplora) handleMempool(w http.ResponseWriter, r *http.Request) {
	f.note("mempool")
	f.mu.Lock()
	out := slices.Clone(f.mempool[r.PathValue("addr")])
	f.mu.Unlock()
	if out == nil {
		out = []esploraTx{}
	}
	writeFakeJSON(w, out)
}

func (f *fakeEsplora) handleTx(w http.ResponseWriter, r *http.Request) {
	f.note("tx")
	id := r.PathValue("txid")
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, list := range []map[string][]esploraTx{f.chain, f.mempool} {
		for _, txs := range list {
			for _, t := range txs {
				if t.TxID == id {
					writeFakeJSON(w, t)
					return
				}
			}
		}
	}
	http.Error(w, "Transaction not found", http.StatusNotFound)
}

func writeFakeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}
