package btcdsource

import (
	"bytes"
	"encoding/json"
	"io"
	"strconv"

	"github.com/btcsuite/btcd/btcjson"
	"github.com/gorilla/websocket"
)

// Reading btcd's websocket messages: whole up to a bound, and past it
// only far enough to tell whose answer it was, so that one oversized
// answer fails its own request and not the connection its neighbours
// share.

// tailBytes is how much of an oversized message's end is kept: enough
// for `"id":18446744073709551615}]` and some white space.
const tailBytes = 64

// wsMessage is a message from btcd: a notification (Method, Params) or
// an answer (ID).
type wsMessage struct {
	Method string            `json:"method"`
	Params []json.RawMessage `json:"params"`
	ID     json.RawMessage   `json:"id"`
}

// readMessage reads the next message. One of at most max bytes comes
// whole (data); a larger one is read to its end without being kept, and
// comes as its last tailBytes (tail, data nil), so that the connection
// goes on. gorilla's own read limit would end the connection instead.
func readMessage(ws *websocket.Conn, max int64) (data, tail []byte, err error) {
	_, r, err := ws.NextReader()
	if err != nil {
		return nil, nil, err
	}
	data, err = io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, nil, err
	}
	if int64(len(data)) <= max {
		return data, nil, nil
	}
	tail = keepTail(nil, data)
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		tail = keepTail(tail, buf[:n])
		switch {
		case err == io.EOF:
			return nil, tail, nil
		case err != nil:
			return nil, nil, err
		}
	}
}

// keepTail is the last tailBytes of tail followed by p.
func keepTail(tail, p []byte) []byte {
	if len(p) > tailBytes {
		p = p[len(p)-tailBytes:]
	}
	tail = append(tail, p...)
	if len(tail) > tailBytes {
		tail = append([]byte{}, tail[len(tail)-tailBytes:]...)
	}
	return tail
}

// trailingID is the request ID an answer ends with: btcd marshals its
// answers as btcjson.Response, whose id comes last (`…,"id":7}`, and
// `…,"id":9}]` for a batch, naming its last request). It finds an
// answer's owner without decoding the answer, and an oversized one's
// from its tail. A notification ends with `"id":null`, so has none.
func trailingID(msg []byte) (uint64, bool) {
	b := bytes.TrimRight(msg, " \t\r\n")
	if b, found := bytes.CutSuffix(b, []byte("]")); found {
		msg = bytes.TrimRight(b, " \t\r\n")
	} else {
		msg = b
	}
	b, found := bytes.CutSuffix(msg, []byte("}"))
	if !found {
		return 0, false
	}
	b = bytes.TrimRight(b, " \t\r\n")
	digits := len(b)
	for digits > 0 && b[digits-1] >= '0' && b[digits-1] <= '9' {
		digits--
	}
	id, err := strconv.ParseUint(string(b[digits:]), 10, 64)
	if err != nil {
		return 0, false
	}
	b = bytes.TrimRight(b[:digits], " \t\r\n")
	b, found = bytes.CutSuffix(b, []byte(":"))
	if !found || !bytes.HasSuffix(bytes.TrimRight(b, " \t\r\n"), []byte(`"id"`)) {
		return 0, false
	}
	return id, true
}

// leadingID is the request ID of an answer whose ID is not last (not
// btcd's order): an object's, or a batch's first answer's.
func leadingID(msg []byte) (uint64, bool) {
	var one wsMessage
	if json.Unmarshal(msg, &one) != nil {
		var batch []wsMessage
		if json.Unmarshal(msg, &batch) != nil || len(batch) == 0 {
			return 0, false
		}
		one = batch[0]
	}
	var id uint64
	return id, json.Unmarshal(one.ID, &id) == nil
}

// rpcAnswer is what a request gets back: btcd's message whole, or word
// that it was over the bound.
type rpcAnswer struct {
	data []byte
	over bool
}

// rpcResponse is a JSON-RPC answer, version 1.0 or 2.0.
type rpcResponse struct {
	Result json.RawMessage   `json:"result"`
	Error  *btcjson.RPCError `json:"error"`
	ID     *json.RawMessage  `json:"id"`
}
