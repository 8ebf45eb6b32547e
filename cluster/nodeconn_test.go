package cluster

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/addrwatch/addrwatch/actors/registry"
	"github.com/addrwatch/addrwatch/cluster/nodecert"
)

// issueNodeTLS gives node id, unless it has one, a certificate from the
// CA in dir (made on first use) and loads it.
func issueNodeTLS(t testing.TB, dir, id string) *NodeTLS {
	t.Helper()
	if _, err := os.Stat(filepath.Join(dir, nodecert.CertFile(id))); err != nil {
		if _, err := nodecert.Issue(dir, []nodecert.Node{{ID: id}}); err != nil {
			t.Fatalf("issue a certificate for %s: %v", id, err)
		}
	}
	nt, err := LoadNodeTLS(filepath.Join(dir, nodecert.CAFile), filepath.Join(dir, nodecert.CertFile(id)), filepath.Join(dir, nodecert.KeyFile(id)))
	if err != nil {
		t.Fatalf("load the certificate of %s: %v", id, err)
	}
	return nt
}

// withTestTLS gives cfg, unless it says how nodes talk, a certificate of a
// CA made for the test: a node opens only with TLS or Insecure.
func withTestTLS(t testing.TB, cfg Config) Config {
	t.Helper()
	if cfg.TLS == nil && !cfg.Insecure {
		cfg.TLS = issueNodeTLS(t, certDir(t), cfg.NodeID)
	}
	return cfg
}

// certDir is a new directory for nodecert files (t.TempDir itself is open
// to others, which nodecert refuses).
func certDir(t testing.TB) string { return filepath.Join(t.TempDir(), "certs") }

// startTLSNode starts a one-node cluster that accepts only nodes of the CA
// in certs.
func startTLSNode(t *testing.T, certs string) *testNode {
	t.Helper()
	return startNodeWith(t, Config{NodeID: "node1", RaftAddr: freeRaftAddr(t), DataDir: t.TempDir(), Logger: discardLogger(),
		TLS: issueNodeTLS(t, certs, "node1")})
}

var allStreams = []stream{streamRaft, streamPublic, streamAdmin, streamFrames}

// TestNodeOpensOnlyWithTLSOrInsecure: plain node connections are a choice
// (Config.Insecure, --insecure-cluster), never what a Config without TLS
// gets.
func TestNodeOpensOnlyWithTLSOrInsecure(t *testing.T) {
	accounts := registry.New(discardLogger())
	defer accounts.Shutdown()
	n, err := Open(Config{NodeID: "node1", RaftAddr: freeRaftAddr(t), DataDir: t.TempDir(), Logger: discardLogger()}, accounts)
	if err == nil {
		n.Close()
		t.Fatal("a node without TLS opened")
	}
	startNodeWith(t, Config{NodeID: "node1", RaftAddr: freeRaftAddr(t), DataDir: t.TempDir(), Logger: discardLogger(), Insecure: true})
}

// TestNodeConnectionsRefuseStrangers: a node with the cluster's TLS takes a
// connection, for raft or for forwarded requests, only from a peer with a
// certificate of the cluster CA. Plain TCP, no certificate, a certificate
// of another CA and one of the right CA that does not name a node are all
// refused before any stream is served; a real node gets through.
func TestNodeConnectionsRefuseStrangers(t *testing.T) {
	certs := certDir(t)
	tn := startTLSNode(t, certs)
	addr := tn.addr

	strangers := map[string]*nodeDialer{
		"plain TCP":            newNodeDialer(nil, nil),
		"no certificate":       {tls: &tls.Config{MinVersion: tls.VersionTLS13, RootCAs: tn.node.dialer.tls.RootCAs, ServerName: nodecert.ServerName}, dial: newNodeDialer(nil, nil).dial},
		"another CA":           newNodeDialer(issueNodeTLS(t, certDir(t), "mallory"), nil),
		"not named as a node":  {tls: withCertificate(tn.node.dialer.tls, certWithoutNodeName(t, certs)), dial: newNodeDialer(nil, nil).dial},
		"an expired node cert": {tls: withCertificate(tn.node.dialer.tls, expiredNodeCert(t, certs)), dial: newNodeDialer(nil, nil).dial},
	}
	for name, d := range strangers {
		for _, s := range allStreams {
			if c, err := d.open(addr, s, testTimeout); err == nil {
				c.Close()
				t.Errorf("%s: stream %c accepted", name, s)
			}
		}
	}
	// raft's own plain transport, as any outsider could run it, gets no
	// answer to an AppendEntries that would depose the leader.
	outsider, err := raft.NewTCPTransport("127.0.0.1:0", nil, 1, testTimeout, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer outsider.Close()
	req := &raft.AppendEntriesRequest{RPCHeader: raft.RPCHeader{ID: []byte("mallory"), Addr: []byte(outsider.LocalAddr())}, Term: 1000}
	var resp raft.AppendEntriesResponse
	if err := outsider.AppendEntries("node1", raft.ServerAddress(addr), req, &resp); err == nil {
		t.Errorf("an outsider's AppendEntries over plain TCP was answered: %+v", resp)
	}
	if !tn.node.IsLeader() || tn.node.raft.CurrentTerm() >= 1000 {
		t.Fatalf("the outsider deposed the leader: state %s, term %d", tn.node.raft.State(), tn.node.raft.CurrentTerm())
	}
	if got := tn.node.nodes.refused.Load(); got < uint64(len(strangers)*len(allStreams)) {
		t.Errorf("%d refusals counted, want at least %d", got, len(strangers)*len(allStreams))
	}

	// A node of the cluster gets through on every stream, and the stream
	// byte picks the listener.
	friend := newNodeDialer(issueNodeTLS(t, certs, "n2"), nil)
	for f, s := range map[Forward]stream{ForwardPublic: streamPublic, ForwardAdmin: streamAdmin, ForwardFrames: streamFrames} {
		c, err := friend.open(addr, s, testTimeout)
		if err != nil {
			t.Fatalf("a node of the cluster: stream %c: %v", s, err)
		}
		echoOnce(t, tn.node.ForwardedListener(f), c)
	}
}

// TestNodeDialsOnlyNodes: a node dialling out checks the other side too; a
// server with a certificate of another CA is refused before anything is
// sent.
func TestNodeDialsOnlyNodes(t *testing.T) {
	certs := certDir(t)
	tn := startTLSNode(t, certs)
	impostor := issueNodeTLS(t, certDir(t), "impostor")
	ln, err := tls.Listen("tcp", "127.0.0.1:0", impostor.server)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	received := make(chan []byte, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		b, _ := io.ReadAll(io.LimitReader(c, 1))
		received <- b
	}()
	if c, err := tn.node.DialForward(ln.Addr().String(), ForwardAdmin, testTimeout); err == nil {
		c.Close()
		t.Fatal("a node dialled a server of another CA")
	}
	if b := <-received; len(b) != 0 {
		t.Fatalf("the impostor received %q", b)
	}
}

// echoOnce accepts the connection c was dialled for on ln, sends a line
// through it and checks that it arrives.
func echoOnce(t *testing.T, ln net.Listener, c net.Conn) {
	t.Helper()
	defer c.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		got, err := ln.Accept()
		if err == nil {
			accepted <- got
		}
	}()
	var got net.Conn
	select {
	case got = <-accepted:
	case <-time.After(testTimeout):
		t.Fatal("the connection never reached its listener")
	}
	defer got.Close()
	if _, err := c.Write([]byte("ping")); err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 4)
	if _, err := io.ReadFull(got, b); err != nil || string(b) != "ping" {
		t.Fatalf("read %q, %v", b, err)
	}
}

func withCertificate(base *tls.Config, cert tls.Certificate) *tls.Config {
	c := base.Clone()
	c.Certificates = []tls.Certificate{cert}
	return c
}

// certWithoutNodeName is a certificate of the CA in certs for client and
// server authentication that does not name nodecert.ServerName.
func certWithoutNodeName(t *testing.T, certs string) tls.Certificate {
	return signedByCA(t, certs, func(tmpl *x509.Certificate) { tmpl.DNSNames = []string{"mallory.example"} })
}

func expiredNodeCert(t *testing.T, certs string) tls.Certificate {
	return signedByCA(t, certs, func(tmpl *x509.Certificate) {
		tmpl.NotBefore, tmpl.NotAfter = time.Now().Add(-48*time.Hour), time.Now().Add(-24*time.Hour)
	})
}

// signedByCA signs a node-like certificate, changed by edit, with the CA
// nodecert wrote into certs.
func signedByCA(t *testing.T, certs string, edit func(*x509.Certificate)) tls.Certificate {
	t.Helper()
	ca, err := tls.LoadX509KeyPair(filepath.Join(certs, nodecert.CAFile), filepath.Join(certs, nodecert.CAKeyFile))
	if err != nil {
		t.Fatal(err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: "mallory"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		DNSNames:     []string{nodecert.ServerName},
	}
	edit(tmpl)
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Leaf, key.Public(), ca.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	pair, err := tls.X509KeyPair(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}))
	if err != nil {
		t.Fatal(err)
	}
	return pair
}

func TestLoadNodeTLSChecksTheFilesAtStart(t *testing.T) {
	certs, other := certDir(t), certDir(t)
	issueNodeTLS(t, certs, "n1")
	issueNodeTLS(t, other, "n2")
	ca, cert, key := filepath.Join(certs, nodecert.CAFile), filepath.Join(certs, nodecert.CertFile("n1")), filepath.Join(certs, nodecert.KeyFile("n1"))
	if _, err := LoadNodeTLS(ca, cert, key); err != nil {
		t.Fatalf("good files: %v", err)
	}
	unnamedCert, unnamedKey := writePair(t, certWithoutNodeName(t, certs))
	cases := map[string][3]string{
		"missing CA":               {filepath.Join(certs, "nope.crt"), cert, key},
		"CA file without a cert":   {key, cert, key},
		"key of another node":      {ca, cert, filepath.Join(other, nodecert.KeyFile("n2"))},
		"certificate of other CA":  {ca, filepath.Join(other, nodecert.CertFile("n2")), filepath.Join(other, nodecert.KeyFile("n2"))},
		"the CA as a node":         {ca, ca, filepath.Join(certs, nodecert.CAKeyFile)},
		"certificate without name": {ca, unnamedCert, unnamedKey},
	}
	for name, files := range cases {
		if _, err := LoadNodeTLS(files[0], files[1], files[2]); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// writePair writes a certificate and its key as PEM files.
func writePair(t *testing.T, pair tls.Certificate) (certPath, keyPath string) {
	t.Helper()
	dir := t.TempDir()
	certPath, keyPath = filepath.Join(dir, "x.crt"), filepath.Join(dir, "x.key")
	keyDER, err := x509.MarshalPKCS8PrivateKey(pair.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: pair.Certificate[0]}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certPath, keyPath
}

// TestThreeNodeReplicationOverMutualTLS runs three nodes with certificates
// of one CA: they elect a leader, replicate, and a follower's forwarded
// request stream reaches the leader; a fourth node gets its certificate
// from the same CA later and joins.
func TestThreeNodeReplicationOverMutualTLS(t *testing.T) {
	c := startClusterWith(t, clusterOptions{certs: certDir(t)})
	leader := c.leader()
	followers := without(c.members, leader)
	cards := populateLeader(t, leader, "acct-1", addresses, t0)
	c.converge(leader, followers)
	for _, m := range c.members {
		if got := cardsOf(t, m.accounts, "acct-1"); !slices.Equal(got, cards) {
			t.Fatalf("%s lists %v, want %v", m.id, got, cards)
		}
	}
	for _, f := range followers {
		addr, known := f.node.Leader()
		if !known {
			t.Fatalf("%s knows no leader", f.id)
		}
		conn, err := f.node.DialForward(addr, ForwardAdmin, testTimeout)
		if err != nil {
			t.Fatalf("%s forwards to the leader: %v", f.id, err)
		}
		echoOnce(t, leader.node.ForwardedListener(ForwardAdmin), conn)
	}
}

// pairProxy is a TCP proxy for one ordered pair of nodes, as the dial hook
// lets a fault test put between them; it counts the connections it carried.
type pairProxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	conns  int
}

func newPairProxy(t *testing.T, target string) *pairProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &pairProxy{ln: ln, target: target}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", target)
			if err != nil {
				in.Close()
				continue
			}
			p.mu.Lock()
			p.conns++
			p.mu.Unlock()
			go func() { io.Copy(out, in); out.Close() }()
			go func() { io.Copy(in, out); in.Close() }()
		}
	}()
	return p
}

func (p *pairProxy) carried() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.conns
}

// TestDialHookCarriesNodeConnections routes every ordered pair of nodes of
// a mutual-TLS cluster through its own proxy: raft and forwarding work
// through them, the handshake is unaffected (nodes check the cluster name,
// not the address dialled), and the leader's raft traffic to each follower
// and each follower's forwarded requests to the leader went through the
// pair's proxy.
func TestDialHookCarriesNodeConnections(t *testing.T) {
	var mu sync.Mutex
	proxies := map[[2]string]*pairProxy{} // {from, to raft address}
	opts := clusterOptions{certs: certDir(t), dial: func(from *member) DialFunc {
		return func(ctx context.Context, addr string) (net.Conn, error) {
			mu.Lock()
			p := proxies[[2]string{from.id, addr}]
			if p == nil {
				p = newPairProxy(t, addr)
				proxies[[2]string{from.id, addr}] = p
			}
			mu.Unlock()
			var d net.Dialer
			return d.DialContext(ctx, "tcp", p.ln.Addr().String())
		}
	}}
	c := startClusterWith(t, opts)
	leader := c.leader()
	followers := without(c.members, leader)
	populateLeader(t, leader, "acct-1", addresses[:2], t0)
	c.converge(leader, followers)
	for _, f := range followers {
		addr, _ := f.node.Leader()
		conn, err := f.node.DialForward(addr, ForwardPublic, testTimeout)
		if err != nil {
			t.Fatalf("%s forwards through its proxy: %v", f.id, err)
		}
		echoOnce(t, leader.node.ForwardedListener(ForwardPublic), conn)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, f := range followers {
		for _, pair := range [][2]*member{{leader, f}, {f, leader}} {
			p := proxies[[2]string{pair[0].id, pair[1].raftAddr}]
			if p == nil || p.carried() == 0 {
				t.Errorf("nothing went from %s to %s through their proxy", pair[0].id, pair[1].id)
			}
		}
	}
	if len(proxies) > 6 {
		t.Errorf("%d proxies for three nodes: %v", len(proxies), fmt.Sprint(proxies))
	}
}

// TestNodeConnectionsAfterClose: once a node is closed its forwarded
// listeners refuse to accept, so the servers on them return.
func TestNodeConnectionsAfterClose(t *testing.T) {
	tn := startNode(t, t.TempDir(), freeRaftAddr(t))
	ln := tn.node.ForwardedListener(ForwardPublic)
	tn.close()
	if _, err := ln.Accept(); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("Accept after Close: %v, want net.ErrClosed", err)
	}
}
