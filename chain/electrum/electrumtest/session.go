package electrumtest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
)

const (
	// requestBytesMax bounds one request line; a longer one ends the
	// connection (ElectrumX's default bound is 1,000,000 bytes).
	requestBytesMax = 1 << 20
	// sessionRequestsMax is how many requests of one connection are
	// answered at once; their answers go out in whatever order they are
	// ready, as real servers' do.
	sessionRequestsMax = 16
	// writeTimeout bounds writing one line to a client.
	writeTimeout = 10 * time.Second
)

// session is one client's connection.
type session struct {
	srv *Server
	nc  net.Conn

	writeMu     sync.Mutex
	versionSeen atomic.Bool

	// subMu orders the subscriptions' answers and notifications: a
	// status is told once, answer or notification, and never a stale one
	// after a newer.
	subMu   sync.Mutex
	headers bool           // subscribed to new tips
	tipTold chainhash.Hash // the tip last told
	subs    map[string]string
}

func newSession(s *Server, nc net.Conn) *session {
	return &session{srv: s, nc: nc, subs: map[string]string{}}
}

// errCloseSession: the request ends the connection (server.version
// with no version in common, as the protocol says).
var errCloseSession = errors.New("close the connection")

// serve reads requests until the connection ends.
func (ss *session) serve() {
	defer ss.nc.Close()
	r := bufio.NewReaderSize(ss.nc, 64<<10)
	slots := make(chan struct{}, sessionRequestsMax)
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		line, err := readRequestLine(r)
		if err != nil {
			return
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		slots <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-slots; wg.Done() }()
			if errors.Is(ss.handleLine(line), errCloseSession) {
				_ = ss.nc.Close()
			}
		}()
	}
}

// readRequestLine reads one line of at most requestBytesMax bytes.
func readRequestLine(r *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > requestBytesMax {
			return nil, errors.New("a request line too long")
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return line, err
	}
}

// write sends one line.
func (ss *session) write(v any) {
	line, err := json.Marshal(v)
	if err != nil {
		return
	}
	ss.writeMu.Lock()
	defer ss.writeMu.Unlock()
	_ = ss.nc.SetWriteDeadline(time.Now().Add(writeTimeout))
	if _, err := ss.nc.Write(append(line, '\n')); err != nil {
		_ = ss.nc.Close()
	}
}

// handleLine answers one line: a request, or a batch of them (answered
// in one line, requests without an ID unanswered). A line that
// subscribes is answered under subMu, so that no notification of a
// later status goes out before the status it answers.
func (ss *session) handleLine(line []byte) error {
	line = bytes.TrimSpace(line)
	isBatch := line[0] == '['
	var batch []json.RawMessage
	if !isBatch {
		batch = []json.RawMessage{line}
	} else {
		if err := json.Unmarshal(line, &batch); err != nil {
			ss.write(failure(nil, codeParseError, "parse error"))
			return nil
		}
		if len(batch) == 0 {
			ss.write(failure(nil, codeInvalidRequest, "empty batch"))
			return nil
		}
	}
	// The index is brought up to date first, once for the line, and
	// not under subMu: a sync notifies every session, this one too.
	stale := ss.srv.fresh()
	if subscribes(batch) {
		ss.subMu.Lock()
		defer ss.subMu.Unlock()
	}
	var answers []*response
	var closeErr error
	for _, one := range batch {
		a, err := ss.handle(one, stale)
		if a != nil {
			answers = append(answers, a)
		}
		if err != nil {
			closeErr = err
		}
	}
	switch {
	case len(answers) == 0:
	case !isBatch:
		ss.write(answers[0])
	default:
		ss.write(answers)
	}
	return closeErr
}

// subscribes reports whether a request of batch is to a method that
// subscribes.
func subscribes(batch []json.RawMessage) bool {
	for _, raw := range batch {
		var req wireRequest
		if json.Unmarshal(raw, &req) == nil && req.Method != nil && methods[*req.Method].subscribes {
			return true
		}
	}
	return false
}

// wireRequest is a JSON-RPC request.
type wireRequest struct {
	ID     json.RawMessage `json:"id"`
	Method *string         `json:"method"`
	Params json.RawMessage `json:"params"`
}

// handle answers one request; nil for a notification (no ID). stale is
// why the index could not be brought up to date, if it could not.
func (ss *session) handle(raw []byte, stale error) (*response, error) {
	if !json.Valid(raw) {
		return failure(nil, codeParseError, "parse error"), nil
	}
	var req wireRequest
	if err := json.Unmarshal(raw, &req); err != nil {
		return failure(nil, codeInvalidRequest, "invalid request: not a JSON-RPC request object"), nil
	}
	id := req.ID
	if len(bytes.TrimSpace(id)) == 0 {
		id = nil
	}
	if req.Method == nil {
		return failure(orNull(id), codeInvalidRequest, "invalid request: no method"), nil
	}
	result, err := ss.call(*req.Method, req.Params, stale)
	if id == nil {
		return nil, closeOnly(err)
	}
	var re *rpcError
	switch {
	case errors.As(err, &re):
		return failure(id, re.code, re.message), nil
	case err != nil:
		return nil, err
	}
	return &response{JSONRPC: "2.0", ID: id, Result: result}, nil
}

func closeOnly(err error) error {
	if errors.Is(err, errCloseSession) {
		return err
	}
	return nil
}

func orNull(id json.RawMessage) json.RawMessage {
	if id == nil {
		return json.RawMessage("null")
	}
	return id
}

// response is a JSON-RPC 2.0 answer.
type response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

// MarshalJSON writes a result even when it is null, as JSON-RPC wants.
func (r *response) MarshalJSON() ([]byte, error) {
	if r.Error != nil {
		return json.Marshal(struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Error   *rpcError       `json:"error"`
		}{r.JSONRPC, orNull(r.ID), r.Error})
	}
	return json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  any             `json:"result"`
	}{r.JSONRPC, r.ID, r.Result})
}

func failure(id json.RawMessage, code int, message string) *response {
	return &response{JSONRPC: "2.0", ID: orNull(id), Error: &rpcError{code: code, message: message}}
}

// notification is a JSON-RPC notification from the server.
type notification struct {
	JSONRPC string `json:"jsonrpc"`
	Method  string `json:"method"`
	Params  []any  `json:"params"`
}

// notifyChanges tells the session the new tip, if it subscribed to tips
// and was told another, and each subscribed script hash whose status
// changed.
func (ss *session) notifyChanges() {
	ss.subMu.Lock()
	defer ss.subMu.Unlock()
	ss.srv.ixMu.RLock()
	defer ss.srv.ixMu.RUnlock()
	ix := ss.srv.ix
	if tip := ix.tip(); ss.headers && tip >= 0 && ix.blocks[tip].hash != ss.tipTold {
		ss.tipTold = ix.blocks[tip].hash
		ss.write(notification{JSONRPC: "2.0", Method: "blockchain.headers.subscribe", Params: []any{tipOf(ix)}})
	}
	for sh, told := range ss.subs {
		if now := ix.status(sh); now != told {
			ss.subs[sh] = now
			ss.write(notification{JSONRPC: "2.0", Method: "blockchain.scripthash.subscribe", Params: []any{sh, nullIfEmpty(now)}})
		}
	}
}

func nullIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}
