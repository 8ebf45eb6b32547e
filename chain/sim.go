package chain

import (
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Sim is the embedded simulated chain (--upstream sim): an http.Handler
// that answers the Esplora endpoints addrwatch uses, for any valid Bitcoin
// mainnet address, from a deterministic synthetic history (sim_chain.go).
// The server reaches it through the ordinary Client (NewHandlerClient), so
// the sim exercises the same decoding, checks and cache as a real upstream.
//
// Routes, as in Esplora:
//
//	GET /address/{a}                        stats; 400 for an invalid address
//	GET /address/{a}/txs/chain              newest 25 confirmed
//	GET /address/{a}/txs/chain/{last_seen}  the 25 after last_seen; [] if unknown
//	GET /address/{a}/txs/mempool            unconfirmed, newest first
//	GET /tx/{txid}                          one transaction; 404 if unknown
//
// A Sim is safe for concurrent use.
type Sim struct {
	now      func() time.Time
	index    *simAddressIndex
	mux      *http.ServeMux
	requests atomic.Int64

	mu        sync.Mutex
	fault     SimFault
	faultLeft int // requests the fault still applies to, when fault.Times > 0
}

// SimFault makes a Sim misbehave, so tests can see the client's and the
// cache's failure paths without a real outage. The zero SimFault is none.
type SimFault struct {
	// Delay holds each answer back this long, or until the request is
	// abandoned (then nothing is written).
	Delay time.Duration
	// Status, when not 0, replaces the answer with this status (429, 500,
	// 503, ...) and a plain-text body.
	Status int
	// RetryAfter is sent, in whole seconds, as Retry-After with Status.
	RetryAfter time.Duration
	// Malformed replaces the answer with a 200 whose body is not JSON.
	Malformed bool
	// Times is how many requests the fault applies to; 0 means every
	// request until the next SetFault.
	Times int
}

// NewSim returns a simulated chain whose present is now(); nil means
// time.Now. Only confirmed transactions with a block time up to now() are
// shown, so the history grows as the clock moves on.
func NewSim(now func() time.Time) *Sim {
	if now == nil {
		now = time.Now
	}
	s := &Sim{now: now, index: newSimAddressIndex()}
	for _, a := range simHubs {
		s.profile(a) // P2WSH and P2TR hubs enter the index
	}
	s.mux = http.NewServeMux()
	s.mux.HandleFunc("GET /address/{addr}", s.handleAddress)
	s.mux.HandleFunc("GET /address/{addr}/txs/chain", s.handleChain)
	s.mux.HandleFunc("GET /address/{addr}/txs/chain/{last}", s.handleChain)
	s.mux.HandleFunc("GET /address/{addr}/txs/mempool", s.handleMempool)
	s.mux.HandleFunc("GET /tx/{txid}", s.handleTx)
	s.mux.HandleFunc("GET /blocks", s.handleBlocks)
	s.mux.HandleFunc("GET /block-height/{height}", s.handleBlockHeight)
	return s
}

// NewSimHandler is NewSim as a plain http.Handler.
func NewSimHandler(now func() time.Time) http.Handler { return NewSim(now) }

// SetFault makes the following requests misbehave as f says.
func (s *Sim) SetFault(f SimFault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fault, s.faultLeft = f, f.Times
}

// Requests is the number of requests the Sim has received.
func (s *Sim) Requests() int64 { return s.requests.Load() }

func (s *Sim) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.requests.Add(1)
	if f, ok := s.takeFault(); ok && s.misbehave(w, r, f) {
		return
	}
	s.mux.ServeHTTP(w, r)
}

func (s *Sim) takeFault() (SimFault, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f := s.fault
	if f == (SimFault{}) {
		return f, false
	}
	if f.Times > 0 {
		if s.faultLeft == 0 {
			return SimFault{}, false
		}
		s.faultLeft--
	}
	return f, true
}

// misbehave applies f and reports whether it answered the request.
func (s *Sim) misbehave(w http.ResponseWriter, r *http.Request, f SimFault) bool {
	if f.Delay > 0 {
		t := time.NewTimer(f.Delay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-r.Context().Done():
			return true
		}
	}
	switch {
	case f.Status != 0:
		if f.RetryAfter > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(int((f.RetryAfter+time.Second-1)/time.Second)))
		}
		http.Error(w, http.StatusText(f.Status), f.Status)
		return true
	case f.Malformed:
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"txid": "00`))
		return true
	}
	return false
}

// profile validates an address as Esplora would and draws its profile.
// P2WSH and P2TR addresses are remembered so their txids resolve later.
func (s *Sim) profile(address string) (simProfile, bool) {
	canonical, err := ValidateBitcoinAddress(address)
	if err != nil {
		return simProfile{}, false
	}
	p, ok := simProfileOf(canonical)
	if ok && (p.addrType == simAddrP2WSH || p.addrType == simAddrP2TR) {
		s.index.remember(p.key, p.address)
	}
	return p, ok
}

func (s *Sim) handleAddress(w http.ResponseWriter, r *http.Request) {
	p, ok := s.profile(r.PathValue("addr"))
	if !ok {
		http.Error(w, "Invalid Bitcoin address", http.StatusBadRequest)
		return
	}
	chain := esploraStats{}
	for _, e := range p.confirmedEntries(s.now().Unix()) {
		funded, spent := p.flows(e)
		chain.TxCount++
		chain.FundedTxoSum += funded
		chain.SpentTxoSum += spent
	}
	writeSimJSON(w, esploraAddress{
		Address:      p.address,
		ChainStats:   chain,
		MempoolStats: simStats(p.address, p.mempoolWireAll()),
	})
}

func (s *Sim) handleChain(w http.ResponseWriter, r *http.Request) {
	p, ok := s.profile(r.PathValue("addr"))
	if !ok {
		http.Error(w, "Invalid Bitcoin address", http.StatusBadRequest)
		return
	}
	all := p.confirmedEntries(s.now().Unix())
	from := 0
	if last := r.PathValue("last"); last != "" {
		txid, ok := CanonicalTxID(last)
		if !ok {
			http.Error(w, "Invalid hex string", http.StatusBadRequest)
			return
		}
		// Like electrs: the page after last_seen, or nothing when it is
		// not in this address's history.
		i := slices.IndexFunc(all, func(e simEntry) bool { return e.txid == txid })
		if i < 0 {
			writeSimJSON(w, []esploraTx{})
			return
		}
		from = i + 1
	}
	page := make([]esploraTx, 0, ChainPageSize)
	for _, e := range all[from:min(from+ChainPageSize, len(all))] {
		page = append(page, p.wire(e))
	}
	writeSimJSON(w, page)
}

func (s *Sim) handleMempool(w http.ResponseWriter, r *http.Request) {
	p, ok := s.profile(r.PathValue("addr"))
	if !ok {
		http.Error(w, "Invalid Bitcoin address", http.StatusBadRequest)
		return
	}
	txs := p.mempoolWireAll()
	if txs == nil {
		txs = []esploraTx{}
	}
	writeSimJSON(w, txs)
}

func (s *Sim) handleTx(w http.ResponseWriter, r *http.Request) {
	txid, ok := CanonicalTxID(r.PathValue("txid"))
	if !ok {
		http.Error(w, "Invalid hex string", http.StatusBadRequest)
		return
	}
	tx, ok := s.resolve(txid, s.now().Unix())
	if !ok {
		http.Error(w, "Transaction not found", http.StatusNotFound)
		return
	}
	writeSimJSON(w, tx)
}

// handleBlocks is GET /blocks: the sim's ten newest blocks, newest first,
// one every simBlockSeconds since its genesis (the hashes its
// transactions' statuses name).
func (s *Sim) handleBlocks(w http.ResponseWriter, _ *http.Request) {
	tip := s.tipHeight()
	blocks := make([]esploraBlock, 0, 10)
	for h := tip; h >= 0 && h > tip-10; h-- {
		blocks = append(blocks, esploraBlock{ID: simBlockHash(h), Height: h})
	}
	writeSimJSON(w, blocks)
}

// handleBlockHeight is GET /block-height/{height}: the hash of the block
// at height, as text, or 404 above the tip.
func (s *Sim) handleBlockHeight(w http.ResponseWriter, r *http.Request) {
	height, err := strconv.ParseInt(r.PathValue("height"), 10, 64)
	if err != nil || height < 0 {
		http.Error(w, "Invalid block height", http.StatusBadRequest)
		return
	}
	if height > s.tipHeight() {
		http.Error(w, "Block not found", http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "text/plain")
	_, _ = io.WriteString(w, simBlockHash(height))
}

// resolve rebuilds the transaction a sim txid names, if the sim has shown
// it (or would show it now).
func (s *Sim) resolve(txid string, now int64) (esploraTx, bool) {
	ref, raw, ok := decodeSimTxID(txid)
	if !ok {
		return esploraTx{}, false
	}
	switch ref.kind {
	case simKindHubConfirmed:
		year, slot := int(ref.number), int(ref.hubSlot)
		if ref.addrType != 0 || !checkSimTxIDTag(raw, "") ||
			year < simHubFirstYear || year > time.Unix(now, 0).UTC().Year() || slot >= simHubTxsPerYear {
			return esploraTx{}, false
		}
		h := simHubTxAt(year, slot)
		if h.blockTime > now {
			return esploraTx{}, false
		}
		return h.wire(), true
	case simKindHubMempool:
		if ref.addrType != 0 || ref.number != 0 || ref.hubSlot != 0 || !checkSimTxIDTag(raw, "") {
			return esploraTx{}, false
		}
		return simHubMempoolWire(), true
	case simKindOwnConfirmed, simKindOwnMempool:
		address, ok := simAddressFromKey(ref.addrType, ref.key, s.index)
		if !ok || !checkSimTxIDTag(raw, address) {
			return esploraTx{}, false
		}
		p, ok := simProfileOf(address)
		if !ok {
			return esploraTx{}, false
		}
		i := int(ref.number)
		if ref.kind == simKindOwnMempool {
			if i >= p.mempool {
				return esploraTx{}, false
			}
			return p.mempoolWire(i), true
		}
		timeline := p.ownTimeline(now)
		if i >= len(timeline) {
			return esploraTx{}, false
		}
		return p.ownWire(timeline[i]), true
	}
	return esploraTx{}, false
}

// simStats sums a listing into Esplora's per-address counters.
func simStats(address string, txs []esploraTx) esploraStats {
	s := esploraStats{TxCount: int64(len(txs))}
	for _, t := range txs {
		for _, in := range t.Vin {
			if in.Prevout != nil && in.Prevout.ScriptPubKeyAddress == address {
				s.SpentTxoSum += in.Prevout.Value
			}
		}
		for _, out := range t.Vout {
			if out.ScriptPubKeyAddress == address {
				s.FundedTxoSum += out.Value
			}
		}
	}
	return s
}

func writeSimJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	// The values are the sim's own and always encode; a failed write means
	// the client went away, and there is no one left to tell.
	_ = json.NewEncoder(w).Encode(v)
}

// SimAddressInfo describes an address's place in the simulated chain, so
// tests of the layers above can pick addresses that show a rule.
type SimAddressInfo struct {
	Address    string    // canonical
	Hub        bool      // shares the hub transactions (SimHubAddresses)
	Dormant    bool      // no transaction after LastActive
	FirstSeen  time.Time // around the first transaction
	LastActive time.Time // Dormant only: the latest possible transaction time
	MempoolTxs int       // own mempool transactions (hub ones not counted)
}

// SimInfo returns where the simulated chain puts address. It fails only
// for an invalid address.
func SimInfo(address string) (SimAddressInfo, error) {
	canonical, err := ValidateBitcoinAddress(address)
	if err != nil {
		return SimAddressInfo{}, err
	}
	p, ok := simProfileOf(canonical)
	if !ok {
		return SimAddressInfo{}, &AddressError{Reason: reasonUnsupported}
	}
	info := SimAddressInfo{
		Address:    p.address,
		Hub:        p.hub,
		Dormant:    p.dormant,
		FirstSeen:  time.Unix(p.start, 0).UTC(),
		MempoolTxs: p.mempool,
	}
	if p.dormant {
		info.LastActive = time.Unix(p.end, 0).UTC()
	}
	return info, nil
}

// SimHubAddresses lists the addresses that share the sim's hub
// transactions.
func SimHubAddresses() []string { return slices.Clone(simHubs) }
