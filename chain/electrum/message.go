package electrum

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// The wire: JSON-RPC 2.0 over a byte stream, one message a line (the
// protocol's "Message Stream"). The client sends requests with numeric
// IDs; the server sends answers, which carry the request's ID, and
// notifications, which carry a method and no ID.

// lineBytesMax bounds one line from the server. The largest answer the
// source asks for is a raw transaction in hex (a 4 MB block's worth of
// transaction is 8 MB of hex) or a history of historyTxsMax entries
// (about 100 bytes each); a longer line is malformed and the connection
// is dropped, since the rest of the stream can no longer be trusted.
const lineBytesMax = 16 << 20

// rpcMessageBytesMax bounds the part of a server's error message kept:
// it is never shown (a server may repeat the script hash asked about),
// only matched to tell "no such transaction" apart.
const rpcMessageBytesMax = 512

// errLineTooLong: the server sent a line over the bound.
var errLineTooLong = errors.New("a line over the bound")

// readLine reads one line of at most max bytes, without its "\n" (nor a
// "\r" before it). A line over max is errLineTooLong; at the end of the
// stream a partial line is io.ErrUnexpectedEOF, and none io.EOF.
func readLine(r *bufio.Reader, max int) ([]byte, error) {
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		if len(line)+len(chunk) > max+1 { // +1: the "\n" itself
			return nil, errLineTooLong
		}
		line = append(line, chunk...)
		switch {
		case err == nil:
			line = bytes.TrimSuffix(line[:len(line)-1], []byte("\r"))
			return line, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && len(line) > 0:
			return nil, io.ErrUnexpectedEOF
		default:
			return nil, err
		}
	}
}

// message is one line from the server, decoded: an answer (isAnswer,
// with the ID of the request and either its result or its error) or a
// notification (method and params).
type message struct {
	isAnswer bool
	id       uint64
	result   json.RawMessage // the JSON of the result; "null" is a result
	rpcErr   *rpcError

	method string
	params json.RawMessage // a JSON array
}

// wireMessage is the JSON of a line. Fields absent and fields null are
// told apart by the raw messages being nil or "null".
type wireMessage struct {
	ID     json.RawMessage `json:"id"`
	Method *string         `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

// wireError is a JSON-RPC error object.
type wireError struct {
	Code    *int64 `json:"code"`
	Message string `json:"message"`
}

// errNotAMessage: a line that is no JSON-RPC answer or notification.
var errNotAMessage = errors.New("a line that is no JSON-RPC answer or notification")

// decodeMessage decodes one line. An answer has a numeric ID and a
// result or a non-null error (JSON-RPC 1.0 servers send both, one
// null); a notification has a method, array params and no ID. Anything
// else, a batch included (the source sends none), is errNotAMessage.
func decodeMessage(line []byte) (message, error) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 || line[0] != '{' {
		return message{}, errNotAMessage
	}
	var w wireMessage
	if err := json.Unmarshal(line, &w); err != nil {
		return message{}, fmt.Errorf("%w: %v", errNotAMessage, err)
	}
	if isNull(w.ID) {
		return decodeNotification(w)
	}
	id, err := strconv.ParseUint(string(w.ID), 10, 64)
	if err != nil || w.Method != nil {
		return message{}, fmt.Errorf("%w: an answer whose id is not one of ours", errNotAMessage)
	}
	m := message{isAnswer: true, id: id}
	if !isNull(w.Error) {
		var we wireError
		if err := json.Unmarshal(w.Error, &we); err != nil || we.Code == nil {
			return message{}, fmt.Errorf("%w: an error that is no JSON-RPC error object", errNotAMessage)
		}
		m.rpcErr = &rpcError{code: *we.Code, message: truncate(we.Message, rpcMessageBytesMax)}
		return m, nil
	}
	if w.Result == nil {
		return message{}, fmt.Errorf("%w: an answer with neither result nor error", errNotAMessage)
	}
	m.result = w.Result
	return m, nil
}

func decodeNotification(w wireMessage) (message, error) {
	if w.Method == nil || *w.Method == "" || w.Result != nil || !isNull(w.Error) {
		return message{}, fmt.Errorf("%w: neither an answer nor a notification", errNotAMessage)
	}
	params := bytes.TrimSpace(w.Params)
	if len(params) == 0 || params[0] != '[' {
		return message{}, fmt.Errorf("%w: a notification without an array of params", errNotAMessage)
	}
	return message{method: *w.Method, params: params}, nil
}

// isNull: a field absent, or JSON null.
func isNull(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) == 0 || string(raw) == "null"
}

func truncate(s string, max int) string {
	if len(s) > max {
		return s[:max]
	}
	return s
}

// request is one JSON-RPC 2.0 request line.
type request struct {
	JSONRPC string `json:"jsonrpc"`
	ID      uint64 `json:"id"`
	Method  string `json:"method"`
	Params  []any  `json:"params"`
}

// encodeRequest is the line (with its "\n") asking method with params.
func encodeRequest(id uint64, method string, params []any) ([]byte, error) {
	if params == nil {
		params = []any{}
	}
	line, err := json.Marshal(request{JSONRPC: "2.0", ID: id, Method: method, Params: params})
	if err != nil {
		return nil, err
	}
	return append(line, '\n'), nil
}
