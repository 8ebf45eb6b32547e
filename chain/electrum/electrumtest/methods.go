package electrumtest

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

const (
	// protocolVersion is the one protocol version the server speaks.
	protocolVersion = "1.4"
	serverVersion   = "electrumtest 1.0"
	// headersMax is the most headers blockchain.block.headers sends.
	headersMax = 2016
)

// method is one protocol method: its parameters' names (the first
// required of them must be given) and what answers it.
type method struct {
	names    []string
	required int
	handle   func(ss *session, p params) (any, error)
	// subscribes: the method tells a status the notifications go on
	// from, so its answer is ordered with them (session.subMu).
	subscribes bool
}

// methods are the protocol 1.4 methods the server answers.
var methods = map[string]method{
	"server.version":          {names: []string{"client_name", "protocol_version"}, handle: (*session).version},
	"server.features":         {handle: (*session).features},
	"server.ping":             {handle: func(*session, params) (any, error) { return nil, nil }},
	"server.banner":           {handle: func(*session, params) (any, error) { return "electrumtest: a btcd regtest node's chain", nil }},
	"server.donation_address": {handle: func(*session, params) (any, error) { return "", nil }},
	"server.peers.subscribe":  {handle: func(*session, params) (any, error) { return []any{}, nil }},

	"blockchain.headers.subscribe": {handle: (*session).headersSubscribe, subscribes: true},
	"blockchain.block.header":      {names: []string{"height", "cp_height"}, required: 1, handle: (*session).blockHeader},
	"blockchain.block.headers":     {names: []string{"start_height", "count", "cp_height"}, required: 2, handle: (*session).blockHeaders},
	"blockchain.relayfee":          {handle: (*session).relayFee},

	"blockchain.scripthash.get_balance": {names: []string{"scripthash"}, required: 1, handle: (*session).getBalance},
	"blockchain.scripthash.get_history": {names: []string{"scripthash"}, required: 1, handle: (*session).getHistory},
	"blockchain.scripthash.get_mempool": {names: []string{"scripthash"}, required: 1, handle: (*session).getMempool},
	"blockchain.scripthash.listunspent": {names: []string{"scripthash"}, required: 1, handle: (*session).listUnspent},
	"blockchain.scripthash.subscribe":   {names: []string{"scripthash"}, required: 1, handle: (*session).subscribe, subscribes: true},
	"blockchain.scripthash.unsubscribe": {names: []string{"scripthash"}, required: 1, handle: (*session).unsubscribe, subscribes: true},

	"blockchain.transaction.get":       {names: []string{"tx_hash", "verbose"}, required: 1, handle: (*session).transactionGet},
	"blockchain.transaction.broadcast": {names: []string{"raw_tx"}, required: 1, handle: (*session).broadcast},
}

// unsupported are the protocol's methods the server leaves out: fee
// estimates, merkle proofs and peers. It says so rather than answer
// "unknown method".
var unsupported = map[string]bool{
	"blockchain.estimatefee":             true,
	"blockchain.transaction.get_merkle":  true,
	"blockchain.transaction.id_from_pos": true,
	"mempool.get_fee_histogram":          true,
	"server.add_peer":                    true,
}

// call answers method with raw params; stale is why the index could not
// be brought up to date, if it could not: the node's error.
func (ss *session) call(name string, raw json.RawMessage, stale error) (any, error) {
	m, ok := methods[name]
	switch {
	case unsupported[name]:
		return nil, badRequest("%s is not supported by this test server", name)
	case !ok:
		return nil, &rpcError{code: codeMethodNotFound, message: fmt.Sprintf("unknown method %q", truncate(name, 64))}
	}
	p, err := bind(raw, m.names, m.required)
	if err != nil {
		return nil, err
	}
	ss.srv.counted(name)
	if stale != nil {
		return nil, daemonError(stale)
	}
	return m.handle(ss, p)
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// version negotiates the protocol: the client's range (a version, or
// [min, max]) must hold 1.4; otherwise the connection is closed, as the
// protocol says. Only the first server.version is taken.
func (ss *session) version(p params) (any, error) {
	if _, err := p.str(0, ""); err != nil {
		return nil, err
	}
	lo, hi := protocolVersion, protocolVersion
	if p.given(1) {
		var one string
		var pair []string
		switch {
		case json.Unmarshal(p[1], &one) == nil:
			lo, hi = one, one
		case json.Unmarshal(p[1], &pair) == nil && len(pair) == 2:
			lo, hi = pair[0], pair[1]
		default:
			return nil, invalidParams("protocol_version is neither a version nor [min, max]")
		}
	}
	if ss.versionSeen.Swap(true) {
		return nil, badRequest("server.version already sent")
	}
	if compareVersions(lo, protocolVersion) > 0 || compareVersions(hi, protocolVersion) < 0 {
		return nil, errCloseSession
	}
	return []string{serverVersion, protocolVersion}, nil
}

// compareVersions compares dotted version numbers; one that does not
// parse is lower than any that does.
func compareVersions(a, b string) int {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	for i := range max(len(pa), len(pb)) {
		na, nb := versionPart(pa, i), versionPart(pb, i)
		if na != nb {
			if na < nb {
				return -1
			}
			return 1
		}
	}
	return 0
}

func versionPart(parts []string, i int) int {
	if i >= len(parts) {
		return 0
	}
	n, err := strconv.Atoi(parts[i])
	if err != nil {
		return -1
	}
	return n
}

func (ss *session) features(params) (any, error) {
	ss.srv.ixMu.RLock()
	genesis := ss.srv.ix.blocks[0].hash.String()
	ss.srv.ixMu.RUnlock()
	host, portText, _ := net.SplitHostPort(ss.srv.Addr())
	port, _ := strconv.Atoi(portText)
	ports := map[string]any{"tcp_port": port}
	if ss.srv.tls {
		ports = map[string]any{"ssl_port": port}
	}
	return map[string]any{
		"genesis_hash":   genesis,
		"hosts":          map[string]any{host: ports},
		"protocol_min":   protocolVersion,
		"protocol_max":   protocolVersion,
		"pruning":        nil,
		"server_version": serverVersion,
		"hash_function":  "sha256",
	}, nil
}

// wireTip is a tip as blockchain.headers.subscribe tells it.
type wireTip struct {
	Height int64  `json:"height"`
	Hex    string `json:"hex"`
}

func tipOf(ix *index) wireTip {
	return wireTip{Height: ix.tip(), Hex: headerHex(ix.blocks[ix.tip()].header)}
}

func headerHex(h wire.BlockHeader) string {
	var b bytes.Buffer
	_ = h.Serialize(&b)
	return hex.EncodeToString(b.Bytes())
}

// headersSubscribe answers the tip and subscribes to new ones (subMu is
// held).
func (ss *session) headersSubscribe(params) (any, error) {
	ss.srv.ixMu.RLock()
	defer ss.srv.ixMu.RUnlock()
	ix := ss.srv.ix
	ss.headers = true
	ss.tipTold = ix.blocks[ix.tip()].hash
	return tipOf(ix), nil
}

func (ss *session) blockHeader(p params) (any, error) {
	height, err := p.integer(0, 0)
	if err != nil {
		return nil, err
	}
	if cp, err := p.integer(1, 0); err != nil || cp != 0 {
		return nil, orBadRequest(err, "cp_height (merkle proofs) is not supported by this test server")
	}
	ss.srv.ixMu.RLock()
	defer ss.srv.ixMu.RUnlock()
	if height < 0 || height > ss.srv.ix.tip() {
		return nil, badRequest("height %d out of range", height)
	}
	return headerHex(ss.srv.ix.blocks[height].header), nil
}

func orBadRequest(err error, format string, args ...any) error {
	if err != nil {
		return err
	}
	return badRequest(format, args...)
}

func (ss *session) blockHeaders(p params) (any, error) {
	start, err := p.integer(0, 0)
	if err != nil {
		return nil, err
	}
	count, err := p.integer(1, 0)
	if err != nil {
		return nil, err
	}
	if cp, err := p.integer(2, 0); err != nil || cp != 0 {
		return nil, orBadRequest(err, "cp_height (merkle proofs) is not supported by this test server")
	}
	if start < 0 || count < 0 {
		return nil, badRequest("start_height and count must not be negative")
	}
	ss.srv.ixMu.RLock()
	defer ss.srv.ixMu.RUnlock()
	end := min(start+min(count, headersMax), ss.srv.ix.tip()+1)
	var b strings.Builder
	for h := start; h < end; h++ {
		b.WriteString(headerHex(ss.srv.ix.blocks[h].header))
	}
	return map[string]any{"count": max(end-start, 0), "hex": b.String(), "max": headersMax}, nil
}

func (ss *session) relayFee(params) (any, error) {
	raw, err := ss.srv.rpc.RawRequest("getinfo", nil)
	if err != nil {
		return nil, daemonError(err)
	}
	var info struct {
		RelayFee float64 `json:"relayfee"`
	}
	if err := json.Unmarshal(raw, &info); err != nil {
		return nil, daemonError(err)
	}
	return info.RelayFee, nil
}

func daemonError(err error) error {
	return &rpcError{code: codeDaemonError, message: "daemon error: " + err.Error()}
}

// withScripthash runs read on the index with parameter 0, a script hash.
func (ss *session) withScripthash(p params, read func(ix *index, sh string) any) (any, error) {
	sh, err := p.hash32(0, "scripthash")
	if err != nil {
		return nil, err
	}
	ss.srv.ixMu.RLock()
	defer ss.srv.ixMu.RUnlock()
	return read(ss.srv.ix, sh), nil
}

func (ss *session) getBalance(p params) (any, error) {
	return ss.withScripthash(p, func(ix *index, sh string) any {
		confirmed, unconfirmed := ix.balance(sh)
		return map[string]int64{"confirmed": confirmed, "unconfirmed": unconfirmed}
	})
}

// wireEntry is a history entry; fee only for the mempool's.
type wireEntry struct {
	TxHash string `json:"tx_hash"`
	Height int64  `json:"height"`
	Fee    *int64 `json:"fee,omitempty"`
}

func wireEntries(entries []historyEntry) []wireEntry {
	out := make([]wireEntry, len(entries))
	for i, e := range entries {
		out[i] = wireEntry{TxHash: e.txid, Height: e.height}
		if e.height <= 0 {
			fee := e.fee
			out[i].Fee = &fee
		}
	}
	return out
}

func (ss *session) getHistory(p params) (any, error) {
	return ss.withScripthash(p, func(ix *index, sh string) any { return wireEntries(ix.historyOf(sh)) })
}

func (ss *session) getMempool(p params) (any, error) {
	return ss.withScripthash(p, func(ix *index, sh string) any { return wireEntries(ix.poolHistory[sh]) })
}

func (ss *session) listUnspent(p params) (any, error) {
	return ss.withScripthash(p, func(ix *index, sh string) any { return ix.unspent(sh) })
}

// subscribe answers the script hash's status and notifies its changes
// from then on (subMu is held).
func (ss *session) subscribe(p params) (any, error) {
	return ss.withScripthash(p, func(ix *index, sh string) any {
		status := ix.status(sh)
		ss.subs[sh] = status
		return nullIfEmpty(status)
	})
}

func (ss *session) unsubscribe(p params) (any, error) {
	return ss.withScripthash(p, func(_ *index, sh string) any {
		_, was := ss.subs[sh]
		delete(ss.subs, sh)
		return was
	})
}

// transactionGet answers a raw transaction in hex from the index, or
// from the node (one it has and the index not yet); verbose, the node's
// getrawtransaction as it answers it, as ElectrumX and electrs pass it
// on.
func (ss *session) transactionGet(p params) (any, error) {
	txid, err := p.hash32(0, "tx_hash")
	if err != nil {
		return nil, err
	}
	verbose, err := p.boolean(1, false)
	if err != nil {
		return nil, err
	}
	if verbose {
		raw, err := ss.srv.rpc.RawRequest("getrawtransaction", []json.RawMessage{json.RawMessage(strconv.Quote(txid)), json.RawMessage("1")})
		if err != nil {
			return nil, daemonError(err)
		}
		return raw, nil
	}
	hash, _ := chainhash.NewHashFromStr(txid)
	ss.srv.ixMu.RLock()
	tx, ok := ss.srv.ix.tx(*hash)
	ss.srv.ixMu.RUnlock()
	if !ok {
		raw, err := ss.srv.rpc.RawRequest("getrawtransaction", []json.RawMessage{json.RawMessage(strconv.Quote(txid)), json.RawMessage("0")})
		if err != nil {
			return nil, daemonError(err)
		}
		return raw, nil
	}
	var b bytes.Buffer
	_ = tx.Serialize(&b)
	return hex.EncodeToString(b.Bytes()), nil
}

func (ss *session) broadcast(p params) (any, error) {
	rawHex, err := p.str(0, "")
	if err != nil {
		return nil, err
	}
	raw, err := hex.DecodeString(rawHex)
	var tx wire.MsgTx
	if err != nil || tx.Deserialize(bytes.NewReader(raw)) != nil {
		return nil, badRequest("the transaction does not decode")
	}
	hash, err := ss.srv.rpc.SendRawTransaction(&tx, true)
	if err != nil {
		return nil, badRequest("the transaction was rejected by network rules: %v", err)
	}
	return hash.String(), nil
}
