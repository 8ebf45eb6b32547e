package electrumtest

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/addrwatch/addrwatch/internal/regtest"
	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/txscript"
)

func TestMain(m *testing.M) { regtest.Main(m) }

// client speaks to the server line by line, as any Electrum client.
type client struct {
	t     *testing.T
	c     net.Conn
	r     *bufio.Reader
	lines chan string
}

// answer is a JSON-RPC answer or notification, decoded loosely.
type answer struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code int `json:"code"`
	} `json:"error"`
	Method string            `json:"method"`
	Params []json.RawMessage `json:"params"`
}

func start(t *testing.T) (*Server, *regtest.Node) {
	t.Helper()
	n := regtest.Shared(t)
	s, err := Start(Config{RPC: n.Client()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, n
}

func dial(t *testing.T, s *Server) *client {
	t.Helper()
	c, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	cl := &client{t: t, c: c, r: bufio.NewReader(c), lines: make(chan string, 64)}
	go func() {
		defer close(cl.lines)
		for {
			line, err := cl.r.ReadString('\n')
			if err != nil {
				return
			}
			cl.lines <- line
		}
	}()
	return cl
}

// send writes a line and reads the next line that is no notification
// (notifications go to notes, if given).
func (cl *client) send(line string, notes *[]answer) string {
	cl.t.Helper()
	if _, err := cl.c.Write([]byte(line + "\n")); err != nil {
		cl.t.Fatal(err)
	}
	return cl.next(notes)
}

// note waits for the next notification, into notes.
func (cl *client) note(notes *[]answer) {
	cl.t.Helper()
	select {
	case line := <-cl.lines:
		var a answer
		if json.Unmarshal([]byte(line), &a) == nil && a.Method != "" {
			*notes = append(*notes, a)
		}
	case <-time.After(20 * time.Second):
		cl.t.Fatal("no notification")
	}
}

func (cl *client) next(notes *[]answer) string {
	cl.t.Helper()
	for {
		select {
		case line, open := <-cl.lines:
			if !open {
				return ""
			}
			var a answer
			if json.Unmarshal([]byte(line), &a) == nil && a.Method != "" {
				if notes != nil {
					*notes = append(*notes, a)
				}
				continue
			}
			return strings.TrimSpace(line)
		case <-time.After(20 * time.Second):
			cl.t.Fatal("no answer")
		}
	}
}

func decode(t *testing.T, line string) answer {
	t.Helper()
	var a answer
	if err := json.Unmarshal([]byte(line), &a); err != nil {
		t.Fatalf("%q: %v", line, err)
	}
	return a
}

func code(t *testing.T, line string) int {
	t.Helper()
	a := decode(t, line)
	if a.Error == nil {
		t.Fatalf("%s: no error", line)
	}
	return a.Error.Code
}

// What a real server answers to what it does not take: an unknown
// method, parameters of the wrong kind or number, bad values, a line
// that is no JSON; named parameters and batches are taken.
func TestErrorsAsARealServersAndWhatItTakes(t *testing.T) {
	s, _ := start(t)
	cl := dial(t, s)
	cl.send(`{"jsonrpc":"2.0","id":0,"method":"server.version","params":["t","1.4"]}`, nil)
	for line, want := range map[string]int{
		`{"jsonrpc":"2.0","id":1,"method":"no.such.method","params":[]}`:                            -32601,
		`{"jsonrpc":"2.0","id":2,"method":"blockchain.block.header","params":["zero"]}`:             -32602,
		`{"jsonrpc":"2.0","id":3,"method":"blockchain.block.header","params":[]}`:                   -32602,
		`{"jsonrpc":"2.0","id":4,"method":"blockchain.block.header","params":[0,0,7]}`:              -32602,
		`{"jsonrpc":"2.0","id":5,"method":"blockchain.block.header","params":{"hight":0}}`:          -32602,
		`{"jsonrpc":"2.0","id":6,"method":"blockchain.block.header","params":[99999999]}`:           1,
		`{"jsonrpc":"2.0","id":7,"method":"blockchain.scripthash.get_history","params":["zz"]}`:     1,
		`{"jsonrpc":"2.0","id":8,"method":"blockchain.transaction.get","params":["` + zeros + `"]}`: 2,
		`{"jsonrpc":"2.0","id":9,"method":"blockchain.estimatefee","params":[2]}`:                   1,
		`{"jsonrpc":"2.0","id":10,"method":"server.version","params":["again","1.4"]}`:              1,
		`{not json`: -32700,
		`42`:        -32600,
	} {
		if got := code(t, cl.send(line, nil)); got != want {
			t.Errorf("%s: error %d, want %d", line, got, want)
		}
	}
	genesis := decode(t, cl.send(`{"jsonrpc":"2.0","id":11,"method":"blockchain.block.header","params":{"height":0}}`, nil))
	var batch []answer
	if err := json.Unmarshal([]byte(cl.send(`[{"jsonrpc":"2.0","id":12,"method":"server.ping"},{"jsonrpc":"2.0","method":"server.ping"},{"jsonrpc":"2.0","id":13,"method":"blockchain.block.header","params":[0]}]`, nil)), &batch); err != nil || len(batch) != 2 {
		t.Fatalf("a batch of two requests and a notification: %v, %d answers", err, len(batch))
	}
	if string(batch[0].Result) != "null" || string(batch[1].Result) != string(genesis.Result) {
		t.Errorf("the batch answered %s and %s", batch[0].Result, batch[1].Result)
	}
}

// Every request of a method the server serves is counted, in a batch
// and without an ID too, by method and all together; one for a method it
// does not know is not.
func TestRequestsAreCounted(t *testing.T) {
	s, _ := start(t)
	cl := dial(t, s)
	cl.send(`{"jsonrpc":"2.0","id":0,"method":"server.version","params":["t","1.4"]}`, nil)
	cl.send(`{"jsonrpc":"2.0","id":1,"method":"no.such.method","params":[]}`, nil)
	cl.send(`[{"jsonrpc":"2.0","id":2,"method":"server.ping"},{"jsonrpc":"2.0","method":"server.ping"},{"jsonrpc":"2.0","id":3,"method":"blockchain.block.header","params":[0]}]`, nil)
	if ping, all := s.Requests("server.ping"), s.AllRequests(); ping != 2 || all != 4 {
		t.Errorf("%d pings and %d requests in all counted, want 2 and 4", ping, all)
	}
}

const zeros = "0000000000000000000000000000000000000000000000000000000000000000"

// A client whose protocol versions do not include 1.4 is disconnected,
// as the protocol says.
func TestNoVersionInCommonClosesTheConnection(t *testing.T) {
	s, _ := start(t)
	if got := dial(t, s).send(`{"jsonrpc":"2.0","id":1,"method":"server.version","params":["t",["1.5","1.6"]]}`, nil); got != "" {
		t.Errorf("answered %s, want the connection closed", got)
	}
	if got := decode(t, dial(t, s).send(`{"jsonrpc":"2.0","id":1,"method":"server.version","params":["t",["1.2","1.4"]]}`, nil)); string(got.Result) != `["electrumtest 1.0","1.4"]` {
		t.Errorf("a range holding 1.4: %s", got.Result)
	}
}

// A script hash's history, status, balance and unspent outputs follow a
// payment into the mempool and into a block, and its subscriber is told
// each new status, which is the protocol's hash of the history.
func TestAScriptHashFollowsAPayment(t *testing.T) {
	s, n := start(t)
	k, err := n.NewKey(regtest.P2WPKH)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := btcutil.DecodeAddress(k.Address, n.Params())
	script, _ := txscript.PayToAddrScript(a)
	sh := scriptHash(script)
	cl := dial(t, s)
	ask := func(method string, notes *[]answer) answer {
		t.Helper()
		return decode(t, cl.send(`{"jsonrpc":"2.0","id":1,"method":"`+method+`","params":["`+sh+`"]}`, notes))
	}
	if got := ask("blockchain.scripthash.subscribe", nil); string(got.Result) != "null" {
		t.Fatalf("an unused script's status: %s", got.Result)
	}
	txid, err := n.Pay(k.Address, 40_000)
	if err != nil {
		t.Fatal(err)
	}
	var notes []answer
	var history []struct {
		TxHash string `json:"tx_hash"`
		Height int64  `json:"height"`
		Fee    *int64 `json:"fee"`
	}
	got := ask("blockchain.scripthash.get_history", &notes)
	if err := json.Unmarshal(got.Result, &history); err != nil || len(history) != 1 || history[0].TxHash != txid ||
		history[0].Height > 0 || history[0].Height < -1 || history[0].Fee == nil || *history[0].Fee <= 0 {
		t.Fatalf("the history after a payment: %s", got.Result)
	}
	if got := ask("blockchain.scripthash.get_balance", nil); string(got.Result) != `{"confirmed":0,"unconfirmed":40000}` {
		t.Errorf("the balance after a payment: %s", got.Result)
	}
	// The wallet's payment spends a confirmed coin (height 0) or its
	// own change still in the mempool (-1).
	waitStatus(t, cl, &notes, sh, fmt.Sprintf("%s:%d:", txid, history[0].Height))

	mined, err := n.Mine(1)
	if err != nil {
		t.Fatal(err)
	}
	height, _, _ := n.Tip()
	heightText, _ := json.Marshal(height)
	waitStatus(t, cl, &notes, sh, txid+":"+string(heightText)+":")
	if got := ask("blockchain.scripthash.listunspent", nil); !strings.Contains(string(got.Result), `"tx_hash":"`+txid+`"`) || !strings.Contains(string(got.Result), `"height":`+string(heightText)) {
		t.Errorf("unspent after a block: %s", got.Result)
	}
	verbose := decode(t, cl.send(`{"jsonrpc":"2.0","id":2,"method":"blockchain.transaction.get","params":["`+txid+`",true]}`, nil))
	if !strings.Contains(string(verbose.Result), `"blockhash":"`+mined[0]+`"`) {
		t.Errorf("the verbose transaction names no block: %s", verbose.Result)
	}
}

// waitStatus waits for the notification of sh's status, the SHA-256 of
// history ("tx_hash:height:" each).
func waitStatus(t *testing.T, cl *client, notes *[]answer, sh, history string) {
	t.Helper()
	sum := sha256.Sum256([]byte(history))
	want := `"` + hex.EncodeToString(sum[:]) + `"`
	for {
		for _, note := range *notes {
			if note.Method == "blockchain.scripthash.subscribe" && len(note.Params) == 2 && string(note.Params[0]) == `"`+sh+`"` && string(note.Params[1]) == want {
				return
			}
		}
		cl.note(notes)
	}
}
