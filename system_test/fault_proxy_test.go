package system_test

import (
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The fault test's network: one TCP proxy per ordered pair of nodes. Every
// connection node A opens to node B (raft's RPCs, which the leader dials to
// each follower and a candidate to each voter, and the requests a follower
// forwards to the leader) goes through the proxy of the link A→B, which the
// test tells to pass, delay, hold (drop) or cut what it carries. A→B and
// B→A are different links, so a partition can be one-sided: "A cannot
// reach B" while B still reaches A.
//
// The nodes are the faultinject build of addrwatchd, which reads its route
// table (raft address of B → address of the proxy A→B) from
// ADDRWATCH_FAULTINJECT_ROUTES (cmd/addrwatchd/faultinject.go). Followers
// learn the leader's address from raft itself (the leader's own --raft), so
// pointing --peers at the proxies would not be enough: the route table is
// applied under every dial. The node connections are mutual TLS, so a
// proxy sees only ciphertext and knows nothing of messages; it works on
// bytes and connections, as a network does.

// ftLinkState is what a link does to the connections it carries.
type ftLinkState struct {
	// holdOut holds the bytes A sends to B, and a new connection's dial
	// to B waits (a blackholed SYN): A's connect succeeds (the proxy
	// accepts it) and then nothing happens. Held bytes pass, in order, once
	// the hold is lifted, as TCP would retransmit them after a short
	// partition; if A closed the connection meanwhile, B gets the bytes and
	// then the close.
	holdOut bool
	// holdBack holds the bytes B sends back to A on A's connections: A's
	// requests arrive and their answers do not.
	holdBack bool
	// cut closes every connection of the link, and each new one as soon
	// as it is accepted (a connection reset, at once, rather than a
	// timeout).
	cut bool
	// delay makes every byte pass this much later, each way.
	delay time.Duration
}

var (
	ftLinkPass = ftLinkState{}
	ftLinkDrop = ftLinkState{holdOut: true, holdBack: true}
	ftLinkCut  = ftLinkState{cut: true}
)

func (s ftLinkState) String() string {
	var parts []string
	switch {
	case s.cut:
		parts = append(parts, "cut")
	case s.holdOut && s.holdBack:
		parts = append(parts, "drop")
	case s.holdOut:
		parts = append(parts, "drop out")
	case s.holdBack:
		parts = append(parts, "drop answers")
	}
	if s.delay > 0 {
		parts = append(parts, "delay "+s.delay.String())
	}
	if len(parts) == 0 {
		return "pass"
	}
	return strings.Join(parts, ", ")
}

// ftProxy is one link A→B: it listens on its own loopback port for the
// connections A opens to B, and passes each on to B's raft address.
type ftProxy struct {
	name   string // "n1→n2"
	target string
	ln     net.Listener

	mu      sync.Mutex
	state   ftLinkState
	changed chan struct{} // closed, and replaced, at every change of state
	conns   map[*ftProxyConn]bool
	closed  bool

	accepted, cuts atomic.Int64
}

// ftChunkSize is the most one read of a proxied connection takes.
const ftChunkSize = 32 << 10

func newFtProxy(t testing.TB, name, target string) *ftProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("proxy %s: %v", name, err)
	}
	p := &ftProxy{name: name, target: target, ln: ln, changed: make(chan struct{}), conns: map[*ftProxyConn]bool{}}
	go p.serve()
	t.Cleanup(p.close)
	return p
}

// addr is where A dials to reach B.
func (p *ftProxy) addr() string { return p.ln.Addr().String() }

// set changes what the link does; a cut closes its connections at once.
func (p *ftProxy) set(s ftLinkState) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.state = s
	close(p.changed)
	p.changed = make(chan struct{})
	if s.cut {
		for c := range p.conns {
			c.close()
			p.cuts.Add(1)
		}
	}
}

// current returns the state and a channel closed when it next changes.
func (p *ftProxy) current() (ftLinkState, <-chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.state, p.changed
}

func (p *ftProxy) close() {
	p.mu.Lock()
	p.closed = true
	for c := range p.conns {
		c.close()
	}
	p.mu.Unlock()
	p.ln.Close()
}

func (p *ftProxy) serve() {
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return // closed
		}
		p.accepted.Add(1)
		go p.handle(client)
	}
}

// ftProxyConn is one proxied connection: A's side and, once dialled, B's.
type ftProxyConn struct {
	client net.Conn
	done   chan struct{} // closed by close
	once   sync.Once

	mu     sync.Mutex
	server net.Conn
}

func (c *ftProxyConn) close() {
	c.once.Do(func() {
		close(c.done)
		c.client.Close()
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.server != nil {
			c.server.Close()
		}
	})
}

// setServer records B's side; it reports false (and closes it) when the
// connection was closed meanwhile.
func (c *ftProxyConn) setServer(s net.Conn) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	select {
	case <-c.done:
		s.Close()
		return false
	default:
	}
	c.server = s
	return true
}

// track registers c; it reports false when the link is cut or closed, and
// c must then be dropped.
func (p *ftProxy) track(c *ftProxyConn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || p.state.cut {
		return false
	}
	p.conns[c] = true
	return true
}

func (p *ftProxy) untrack(c *ftProxyConn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.conns, c)
}

// ftChunk is bytes read from one side, with when they were read.
type ftChunk struct {
	data []byte
	at   time.Time
}

func (p *ftProxy) handle(client net.Conn) {
	c := &ftProxyConn{client: client, done: make(chan struct{})}
	if !p.track(c) {
		client.Close()
		p.cuts.Add(1)
		return
	}
	defer p.untrack(c)
	defer c.close()
	out := make(chan ftChunk, 16)
	go c.read(client, out)
	// B is dialled only when A's bytes may pass: while the link holds
	// them, A's connection is accepted and nothing reaches B.
	if !p.await(time.Now(), false, c.done) {
		return
	}
	server, err := net.Dial("tcp", p.target)
	if err != nil || !c.setServer(server) {
		return
	}
	back := make(chan ftChunk, 16)
	go c.read(server, back)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); p.pass(c, out, server, false) }()
	go func() { defer wg.Done(); p.pass(c, back, client, true) }()
	wg.Wait()
}

// read reads src into chunks until it ends; it closes chunks when src
// ends (the end passes on after the bytes before it).
func (c *ftProxyConn) read(src net.Conn, chunks chan<- ftChunk) {
	defer close(chunks)
	for {
		buf := make([]byte, ftChunkSize)
		n, err := src.Read(buf)
		if n > 0 {
			select {
			case chunks <- ftChunk{data: buf[:n], at: time.Now()}:
			case <-c.done:
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// pass writes chunks to dst as the link lets them through, then passes on
// the end of the stream (a half close). back is the direction B→A.
func (p *ftProxy) pass(c *ftProxyConn, chunks <-chan ftChunk, dst net.Conn, back bool) {
	for ch := range chunks {
		if !p.await(ch.at, back, c.done) {
			return
		}
		if _, err := dst.Write(ch.data); err != nil {
			c.close()
			return
		}
	}
	if tc, ok := dst.(*net.TCPConn); ok {
		tc.CloseWrite()
	}
}

// await waits until bytes read at `at` may pass in their direction: the
// link is not cut, does not hold that direction, and at+delay has come.
// It reports false when the connection is closed or cut meanwhile.
func (p *ftProxy) await(at time.Time, back bool, done <-chan struct{}) bool {
	for {
		s, changed := p.current()
		if s.cut {
			return false
		}
		held := s.holdOut
		if back {
			held = s.holdBack
		}
		var timer *time.Timer
		var due <-chan time.Time
		if !held {
			wait := time.Until(at.Add(s.delay))
			if wait <= 0 {
				return true
			}
			timer = time.NewTimer(wait)
			due = timer.C
		}
		select {
		case <-done:
			return false
		case <-changed:
		case <-due:
		}
		if timer != nil {
			timer.Stop()
		}
	}
}

// ftNet is the proxies between every ordered pair of nodes.
type ftNet struct {
	n     int
	links map[[2]int]*ftProxy // [from, to]
}

// newFtNet makes a proxy for every link between nodes (which must have
// their raft addresses) and sets each node's route table in its
// environment, to use with the faultinject build of addrwatchd.
func newFtNet(t testing.TB, nodes []*server) *ftNet {
	t.Helper()
	fn := &ftNet{n: len(nodes), links: map[[2]int]*ftProxy{}}
	for a := range nodes {
		var routes []string
		for b, to := range nodes {
			if a == b {
				continue
			}
			p := newFtProxy(t, fmt.Sprintf("n%d→n%d", a+1, b+1), to.raftAddr)
			fn.links[[2]int{a, b}] = p
			routes = append(routes, to.raftAddr+"="+p.addr())
		}
		nodes[a].env = append(nodes[a].env, faultRoutesEnv+"="+strings.Join(routes, ","))
	}
	return fn
}

// faultRoutesEnv is the faultinject build's route table variable.
const faultRoutesEnv = "ADDRWATCH_FAULTINJECT_ROUTES"

// set puts every link of links in state s.
func (n *ftNet) set(s ftLinkState, links ...[2]int) {
	for _, l := range links {
		n.links[l].set(s)
	}
}

// heal lets every link pass again.
func (n *ftNet) heal() {
	for _, p := range n.links {
		p.set(ftLinkPass)
	}
}

// from lists the links a opens to the other nodes, to those it accepts
// from them; between lists both links of a pair.
func (n *ftNet) from(a int) [][2]int {
	var ls [][2]int
	for b := range n.n {
		if b != a {
			ls = append(ls, [2]int{a, b})
		}
	}
	return ls
}

func (n *ftNet) to(b int) [][2]int {
	var ls [][2]int
	for a := range n.n {
		if a != b {
			ls = append(ls, [2]int{a, b})
		}
	}
	return ls
}

func (n *ftNet) between(a, b int) [][2]int { return [][2]int{{a, b}, {b, a}} }

// unused lists the links that never carried a connection.
func (n *ftNet) unused() []string {
	var names []string
	for _, p := range n.links {
		if p.accepted.Load() == 0 {
			names = append(names, p.name)
		}
	}
	return names
}

// TestFaultProxy checks the fault test's proxy on its own against an echo
// server: bytes pass; a delay holds them back at least that long; a drop
// accepts new connections but reaches nobody and holds the bytes of open
// ones until it is lifted, then passes them in order; holding the answers
// only lets requests through; a cut closes open connections and each new
// one. Durations are asserted only from below (a proxy that delays must
// never be early), never from above.
func TestFaultProxy(t *testing.T) {
	t.Parallel()
	echo, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer echo.Close()
	var reached atomic.Int64 // connections that reached the echo server
	var echoed sync.Map      // string → true: what the echo server received
	go func() {
		for {
			c, err := echo.Accept()
			if err != nil {
				return
			}
			reached.Add(1)
			go func() {
				defer c.Close()
				buf := make([]byte, 1024)
				for {
					n, err := c.Read(buf)
					if n > 0 {
						echoed.Store(string(buf[:n]), true)
						c.Write(buf[:n])
					}
					if err != nil {
						return
					}
				}
			}()
		}
	}()
	p := newFtProxy(t, "a→b", echo.Addr().String())
	dial := func() net.Conn {
		t.Helper()
		c, err := net.Dial("tcp", p.addr())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	// roundTrip sends msg and reads the echo, waiting up to wait (0: as
	// long as it takes); it returns what came back.
	roundTrip := func(c net.Conn, msg string, wait time.Duration) string {
		t.Helper()
		if _, err := c.Write([]byte(msg)); err != nil {
			t.Fatalf("write %q: %v", msg, err)
		}
		return readEcho(t, c, len(msg), wait)
	}

	c := dial()
	if got := roundTrip(c, "hello", 0); got != "hello" {
		t.Fatalf("pass: echoed %q", got)
	}

	const delay = 150 * time.Millisecond
	p.set(ftLinkState{delay: delay})
	began := time.Now()
	if got := roundTrip(c, "slow", 0); got != "slow" {
		t.Fatalf("delay: echoed %q", got)
	}
	if took := time.Since(began); took < 2*delay {
		t.Errorf("delay %s each way: the round trip took %s", delay, took)
	}

	p.set(ftLinkDrop)
	if got := roundTrip(c, "held", 200*time.Millisecond); got != "" {
		t.Fatalf("drop: %q came back", got)
	}
	before := reached.Load()
	fresh := dial() // accepted by the proxy, held before the echo server
	if _, err := fresh.Write([]byte("early")); err != nil {
		t.Fatal(err)
	}
	if got := readEcho(t, fresh, 5, 200*time.Millisecond); got != "" || reached.Load() != before {
		t.Fatalf("drop: a new connection reached the other side (echo %q, %d new connections)", got, reached.Load()-before)
	}
	p.set(ftLinkPass)
	if got := readEcho(t, c, 4, 0); got != "held" {
		t.Fatalf("after the drop: held bytes came back as %q", got)
	}
	if got := readEcho(t, fresh, 5, 0); got != "early" {
		t.Fatalf("after the drop: the held connection echoed %q", got)
	}

	p.set(ftLinkState{holdBack: true})
	if got := roundTrip(c, "asked", 200*time.Millisecond); got != "" {
		t.Fatalf("answers held: %q came back", got)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, found := echoed.Load("asked"); found {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("answers held: the request did not reach the other side")
		}
	}
	p.set(ftLinkPass)
	if got := readEcho(t, c, 5, 0); got != "asked" {
		t.Fatalf("after holding answers: %q came back", got)
	}

	p.set(ftLinkCut)
	for _, conn := range []net.Conn{c, dial()} {
		conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		if n, err := conn.Read(make([]byte, 1)); err == nil || isTimeout(err) {
			t.Fatalf("cut: a connection is still open (read %d bytes, %v)", n, err)
		}
	}
	p.set(ftLinkPass)
	if got := roundTrip(dial(), "again", 0); got != "again" {
		t.Fatalf("after the cut: echoed %q", got)
	}
	if p.cuts.Load() < 2 {
		t.Errorf("cut: %d connections counted as cut, want 2 or more", p.cuts.Load())
	}
}

// readEcho reads n bytes from c within wait (0: up to 10 s, a failure)
// and returns what it got; with a wait, nothing arriving is "".
func readEcho(t *testing.T, c net.Conn, n int, wait time.Duration) string {
	t.Helper()
	limit := wait
	if wait == 0 {
		limit = 10 * time.Second
	}
	c.SetReadDeadline(time.Now().Add(limit))
	defer c.SetReadDeadline(time.Time{})
	buf := make([]byte, n)
	got, err := io.ReadFull(c, buf)
	if err != nil && !(wait > 0 && isTimeout(err)) {
		t.Fatalf("read: %v (after %q)", err, buf[:got])
	}
	return string(buf[:got])
}

func isTimeout(err error) bool {
	var ne net.Error
	return err != nil && errors.As(err, &ne) && ne.Timeout()
}
