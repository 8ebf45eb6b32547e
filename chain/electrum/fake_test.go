package electrum

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"encoding/json"
	"net"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/addrwatch/addrwatch/chain"
	"github.com/btcsuite/btcd/chaincfg"
)

// fakeServer is a scripted Electrum server on loopback, for what a real
// one would not do: it answers the handshake as a mainnet server, and
// hands every other request to answer, which writes whatever it likes,
// or nothing.
type fakeServer struct {
	ln     net.Listener
	answer func(c *fakeConn, r fakeRequest)
	conns  atomic.Int32 // connections accepted
}

// fakeRequest is a request the fake server read.
type fakeRequest struct {
	ID     uint64          `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// fakeConn is one connection to the fake server.
type fakeConn struct {
	net.Conn
	mu sync.Mutex
}

// send writes one line.
func (c *fakeConn) send(line string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, _ = c.Write([]byte(line + "\n"))
}

// result answers r with the JSON result.
func (c *fakeConn) result(r fakeRequest, result string) {
	c.send(`{"jsonrpc":"2.0","id":` + itoa(r.ID) + `,"result":` + result + `}`)
}

func itoa(n uint64) string { b, _ := json.Marshal(n); return string(b) }

func startFake(t *testing.T, answer func(c *fakeConn, r fakeRequest)) *fakeServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeServer{ln: ln, answer: answer}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			f.conns.Add(1)
			go f.serve(&fakeConn{Conn: nc})
		}
	}()
	return f
}

// serve answers the handshake (version, features, and the first
// headers.subscribe, with mainnet's genesis block as the tip), then
// hands every request to answer.
func (f *fakeServer) serve(c *fakeConn) {
	defer c.Close()
	r := bufio.NewReader(c)
	toldTip := false
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			return
		}
		var req fakeRequest
		if json.Unmarshal(line, &req) != nil {
			return
		}
		switch {
		case req.Method == "server.version":
			c.result(req, `["fake 1.0","1.4"]`)
		case req.Method == "server.features":
			c.result(req, `{"genesis_hash":"`+chaincfg.MainNetParams.GenesisHash.String()+`","hash_function":"sha256"}`)
		case req.Method == "blockchain.headers.subscribe" && !toldTip:
			toldTip = true
			c.result(req, `{"height":0,"hex":"`+genesisHeaderHex()+`"}`)
		case f.answer != nil:
			f.answer(c, req)
		}
	}
}

// genesisHeaderHex is mainnet's genesis block header in hex.
func genesisHeaderHex() string {
	var b bytes.Buffer
	_ = chaincfg.MainNetParams.GenesisBlock.Header.Serialize(&b)
	return hex.EncodeToString(b.Bytes())
}

// openFake is a mainnet Source for the fake server.
func openFake(t *testing.T, f *fakeServer, opts Options) *Source {
	t.Helper()
	src, err := Open(chain.SourceSpec{Kind: chain.SourceElectrum, Address: f.ln.Addr().String()}, chain.Reach{}, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	return src
}
