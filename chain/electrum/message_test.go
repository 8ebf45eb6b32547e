package electrum

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/txscript"
)

// What a line from the server decodes to, and what it does not.
func TestDecodeMessage(t *testing.T) {
	answers := map[string]message{
		`{"jsonrpc":"2.0","id":7,"result":["electrs 0.10","1.4"]}`:                {isAnswer: true, id: 7, result: []byte(`["electrs 0.10","1.4"]`)},
		`{"jsonrpc":"2.0","id":8,"result":null}`:                                  {isAnswer: true, id: 8, result: []byte(`null`)},
		`{"id":9,"result":"ab","error":null}`:                                     {isAnswer: true, id: 9, result: []byte(`"ab"`)}, // JSON-RPC 1.0
		`{"jsonrpc":"2.0","id":10,"error":{"code":-32601,"message":"nope"}}`:      {isAnswer: true, id: 10, rpcErr: &rpcError{code: -32601, message: "nope"}},
		`{"jsonrpc":"2.0","method":"blockchain.headers.subscribe","params":[{}]}`: {method: "blockchain.headers.subscribe", params: []byte(`[{}]`)},
		` {"id":null,"method":"m","params":[]} `:                                  {method: "m", params: []byte(`[]`)},
	}
	for line, want := range answers {
		got, err := decodeMessage([]byte(line))
		if err != nil {
			t.Errorf("%s: %v", line, err)
			continue
		}
		if got.isAnswer != want.isAnswer || got.id != want.id || string(got.result) != string(want.result) ||
			got.method != want.method || string(got.params) != string(want.params) ||
			(got.rpcErr == nil) != (want.rpcErr == nil) || (got.rpcErr != nil && *got.rpcErr != *want.rpcErr) {
			t.Errorf("%s decoded to %+v, want %+v", line, got, want)
		}
	}
	for _, line := range []string{
		``, `[]`, `[{"id":1,"result":1}]`, `null`, `"text"`, `{`, `{}`,
		`{"id":1}`,                                                               // neither result nor error
		`{"id":-1,"result":1}`, `{"id":"1","result":1}`, `{"id":1.5,"result":1}`, // not one of our IDs
		`{"id":1,"method":"m","result":1}`,       // both
		`{"id":1,"error":{"message":"no code"}}`, // an error without a code
		`{"id":1,"error":"text"}`,                // an error that is no object
		`{"method":"m"}`, `{"method":"m","params":{}}`, `{"method":"","params":[]}`,
		`{"method":"m","params":[],"result":1}`,
	} {
		if m, err := decodeMessage([]byte(line)); !errors.Is(err, errNotAMessage) {
			t.Errorf("%q decoded to %+v, %v", line, m, err)
		}
	}
	long := `{"id":1,"error":{"code":1,"message":"` + strings.Repeat("x", 2*rpcMessageBytesMax) + `"}}`
	if m, err := decodeMessage([]byte(long)); err != nil || len(m.rpcErr.message) != rpcMessageBytesMax {
		t.Errorf("a long error message is not cut to its bound: %v", err)
	}
}

// Lines are read up to their bound, across the reader's buffer, and a
// longer one is refused rather than read on.
func TestReadLine(t *testing.T) {
	in := "short\r\n" + strings.Repeat("x", 40) + "\n" + strings.Repeat("y", 41) + "\n"
	r := bufio.NewReaderSize(strings.NewReader(in), 16)
	if line, err := readLine(r, 40); err != nil || string(line) != "short" {
		t.Fatalf("first line %q, %v", line, err)
	}
	if line, err := readLine(r, 40); err != nil || len(line) != 40 {
		t.Fatalf("a line of the bound: %d bytes, %v", len(line), err)
	}
	if _, err := readLine(r, 40); !errors.Is(err, errLineTooLong) {
		t.Fatalf("a line over the bound: %v", err)
	}
	if _, err := readLine(bufio.NewReader(strings.NewReader("cut")), 40); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("a line cut by the end: %v", err)
	}
	if _, err := readLine(bufio.NewReader(strings.NewReader("")), 40); !errors.Is(err, io.EOF) {
		t.Errorf("the end: %v", err)
	}
}

// FuzzReadAndDecode feeds any bytes through the line reader and the
// message decoder: neither panics, no line is over its bound or holds a
// newline, the lines read are the input's, and every decoded message is
// an answer with one outcome or a notification with a method and array
// params. Seeds: testdata/fuzz/FuzzReadAndDecode.
func FuzzReadAndDecode(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"result":["fake","1.4"]}` + "\n"))
	f.Add([]byte(`{"jsonrpc":"2.0","method":"blockchain.scripthash.subscribe","params":["ab",null]}` + "\n" + `{"id":2,"error":{"code":1,"message":"x"}}` + "\r\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		const max = 64
		r := bufio.NewReaderSize(bytes.NewReader(data), 16)
		var read bytes.Buffer
		for {
			line, err := readLine(r, max)
			if err != nil {
				if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, errLineTooLong) {
					t.Fatalf("readLine: %v", err)
				}
				break
			}
			if len(line) > max || bytes.IndexByte(line, '\n') >= 0 {
				t.Fatalf("a line of %d bytes, or with a newline: %q", len(line), line)
			}
			read.Write(line)
			m, err := decodeMessage(line)
			if err != nil {
				continue
			}
			switch {
			case m.isAnswer && (m.rpcErr == nil) == (m.result == nil):
				t.Fatalf("%q: an answer with both or neither of result and error", line)
			case !m.isAnswer && (m.method == "" || m.params[0] != '['):
				t.Fatalf("%q: a notification without a method or array params", line)
			}
		}
		stripped := bytes.ReplaceAll(bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n")), []byte("\n"), nil)
		if !bytes.HasPrefix(stripped, read.Bytes()) {
			t.Fatalf("the lines read %q are not the input's %q", read.Bytes(), data)
		}
	})
}

// The protocol's own example: the genesis block's address.
func TestScriptHashOfTheProtocolsExample(t *testing.T) {
	a, err := btcutil.DecodeAddress("1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa", &chaincfg.MainNetParams)
	if err != nil {
		t.Fatal(err)
	}
	script, _ := txscript.PayToAddrScript(a)
	if got := scriptHash(script); got != "8b01df4e368ea28f8dc0423bcf7a4923e3a12d307c875e47a0cfbf90b5c39161" {
		t.Errorf("script hash %s", got)
	}
}

// Heights are asked for in runs: close ones together, far ones apart,
// none longer than a server sends.
func TestHeaderRuns(t *testing.T) {
	heights := []int64{5, 6, 9, 9 + headerGapMax + 1, 9 + headerGapMax + 3, 1000}
	for h := int64(3000); h < 3000+headersPerRequestMax+2; h++ {
		heights = append(heights, h)
	}
	got := headerRuns(heights)
	want := [][2]int64{{5, 9 + headerGapMax + 3}, {1000, 1000}, {3000, 3000 + headersPerRequestMax - 1}, {3000 + headersPerRequestMax, 3000 + headersPerRequestMax + 1}}
	if len(got) != len(want) {
		t.Fatalf("%d runs, want %d: %v", len(got), len(want), want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("run %d is %v, want %v", i, got[i], want[i])
		}
	}
}
