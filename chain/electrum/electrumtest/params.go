package electrumtest

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
)

// JSON-RPC's error codes, and the Electrum servers' own.
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
	codeMethodNotFound = -32601
	codeInvalidParams  = -32602
	codeBadRequest     = 1 // ElectrumX's BAD_REQUEST, electrs' BadRequest
	codeDaemonError    = 2 // the node's error, passed on
)

// rpcError is an error answer.
type rpcError struct {
	code    int
	message string
}

func (e *rpcError) Error() string { return fmt.Sprintf("error %d: %s", e.code, e.message) }

func (e *rpcError) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}{e.code, e.message})
}

func invalidParams(format string, args ...any) error {
	return &rpcError{code: codeInvalidParams, message: "invalid params: " + fmt.Sprintf(format, args...)}
}

func badRequest(format string, args ...any) error {
	return &rpcError{code: codeBadRequest, message: fmt.Sprintf(format, args...)}
}

// params are a request's parameters in the order the method names them,
// passed by position or by name; nil where not given.
type params []json.RawMessage

// bind reads raw (absent, an array or an object) as the parameters
// named names, of which the first required must be given.
func bind(raw json.RawMessage, names []string, required int) (params, error) {
	p := make(params, len(names))
	raw = bytes.TrimSpace(raw)
	switch {
	case len(raw) == 0 || string(raw) == "null":
	case raw[0] == '[':
		var list []json.RawMessage
		if err := json.Unmarshal(raw, &list); err != nil {
			return nil, invalidParams("not a list")
		}
		if len(list) > len(names) {
			return nil, invalidParams("%d given, at most %d taken", len(list), len(names))
		}
		copy(p, list)
	case raw[0] == '{':
		var named map[string]json.RawMessage
		if err := json.Unmarshal(raw, &named); err != nil {
			return nil, invalidParams("not an object")
		}
		for name, v := range named {
			i := indexOf(names, name)
			if i < 0 {
				return nil, invalidParams("no parameter %q", name)
			}
			p[i] = v
		}
	default:
		return nil, invalidParams("neither a list nor an object")
	}
	for i := range required {
		if p[i] == nil {
			return nil, invalidParams("%s is missing", names[i])
		}
	}
	return p, nil
}

func indexOf(names []string, name string) int {
	for i, n := range names {
		if n == name {
			return i
		}
	}
	return -1
}

func (p params) given(i int) bool { return p[i] != nil && string(p[i]) != "null" }

// integer is parameter i, a JSON integer; def when not given.
func (p params) integer(i int, def int64) (int64, error) {
	if !p.given(i) {
		return def, nil
	}
	var n int64
	if err := json.Unmarshal(p[i], &n); err != nil {
		return 0, invalidParams("parameter %d is not an integer", i+1)
	}
	return n, nil
}

// boolean is parameter i, a JSON boolean; def when not given.
func (p params) boolean(i int, def bool) (bool, error) {
	if !p.given(i) {
		return def, nil
	}
	var b bool
	if err := json.Unmarshal(p[i], &b); err != nil {
		return false, invalidParams("parameter %d is not a boolean", i+1)
	}
	return b, nil
}

// str is parameter i, a JSON string; def when not given.
func (p params) str(i int, def string) (string, error) {
	if !p.given(i) {
		return def, nil
	}
	var s string
	if err := json.Unmarshal(p[i], &s); err != nil {
		return "", invalidParams("parameter %d is not a string", i+1)
	}
	return s, nil
}

// hash32 is parameter i, 32 bytes in hex (a script hash or a
// transaction's), in lower case; what names it otherwise.
func (p params) hash32(i int, what string) (string, error) {
	s, err := p.str(i, "")
	if err != nil {
		return "", err
	}
	if b, err := hex.DecodeString(s); err != nil || len(b) != 32 {
		return "", badRequest("invalid %s", what)
	}
	return strings.ToLower(s), nil
}
