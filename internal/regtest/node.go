package regtest

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"sync"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/integration/rpctest"
	"github.com/btcsuite/btcd/rpcclient"
)

// startHeight is the chain's height when Start returns. Segregated
// witness activates on regtest as on mainnet, by miners' signals over
// three windows of 144 blocks, so a P2WPKH coin can be spent only from
// height 432; and the harness's wallet then holds 332 mature coinbase
// coins, one for each Pay or Key.Fund before the next block (every
// block mined after that matures one more).
const startHeight = 3 * 144

// Node is one running btcd on regtest with its harness.
type Node struct {
	h *rpctest.Harness
}

// Start starts a node: btcd on loopback ports of its own, with
// --addrindex and --txindex, and a chain of startHeight blocks so that
// segregated witness is active and the harness's wallet has coins to pay
// with. Stop stops it. Most tests want Shared or Own instead.
func Start() (*Node, error) {
	if !mainCalled {
		return nil, errNoMain
	}
	btcd, err := btcdBinary()
	if err != nil {
		return nil, err
	}
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("regtest: finding the test binary, which supervises btcd: %w", err)
	}
	// The supervising copy of this binary learns btcd's path from its
	// environment (supervise.go); the harness passes its own on.
	if err := os.Setenv(superviseEnv, btcd); err != nil {
		return nil, err
	}
	h, err := newHarness(self)
	if err != nil {
		return nil, fmt.Errorf("regtest: preparing btcd: %w", err)
	}
	coinbaseMaturity := uint32(h.ActiveNet.CoinbaseMaturity)
	if err := h.SetUp(true, startHeight-coinbaseMaturity); err != nil {
		_ = h.TearDown()
		return nil, fmt.Errorf("regtest: starting btcd (%s) on regtest: %w", btcd, err)
	}
	return &Node{h: h}, nil
}

// newHarness prepares a harness whose btcd is supervised by self. The
// harness's address generator is a package variable of rpctest, so nodes
// started at once take turns to set it and read it.
func newHarness(self string) (*rpctest.Harness, error) {
	harnessMu.Lock()
	defer harnessMu.Unlock()
	rpctest.ListenAddressGenerator = loopbackAddresses
	return rpctest.New(&chaincfg.RegressionNetParams, nil, []string{"--addrindex", "--txindex"}, self)
}

var harnessMu sync.Mutex

// Stop stops btcd and removes its data.
func (n *Node) Stop() error { return n.h.TearDown() }

// Client is the harness's own RPC client (a websocket) for what no
// helper here does.
func (n *Node) Client() *rpcclient.Client { return n.h.Client }

// Params are the regtest network's parameters.
func (n *Node) Params() *chaincfg.Params { return n.h.ActiveNet }

// RPC is how a client reaches the node's JSON-RPC server.
type RPC struct {
	Host     string // 127.0.0.1:PORT
	User     string
	Password string
	Cert     []byte // PEM of the node's own certificate, what --chain-cert names
}

// RPC tells how to reach the node.
func (n *Node) RPC() RPC {
	c := n.h.RPCConfig()
	return RPC{Host: c.Host, User: c.User, Password: c.Pass, Cert: c.Certificates}
}

// URL is https://USER:PASS@HOST:PORT, what --chain takes after "btcd:".
func (r RPC) URL() *url.URL {
	return &url.URL{Scheme: "https", User: url.UserPassword(r.User, r.Password), Host: r.Host}
}

// loopbackAddresses gives btcd a peer and an RPC address on loopback
// ports the kernel just handed out, rather than the harness's counter
// from 8333, which two test binaries running at once would both use.
// Both listeners are held until both ports are known so they differ.
func loopbackAddresses() (peer, rpc string) {
	a, errA := net.Listen("tcp4", "127.0.0.1:0")
	b, errB := net.Listen("tcp4", "127.0.0.1:0")
	if errA != nil || errB != nil {
		panic(fmt.Sprintf("regtest: no free loopback port: %v %v", errA, errB))
	}
	defer a.Close()
	defer b.Close()
	return a.Addr().String(), b.Addr().String()
}
