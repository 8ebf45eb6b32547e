package cluster

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"
	"golang.org/x/time/rate"
)

// Node connections: the only way nodes talk to each other. Every node
// listens on its raft address for the other nodes. A connection is
// accepted only after a TLS 1.3 handshake in which both sides prove, with a
// certificate from the cluster CA, that they are nodes: on loopback too,
// where any local user could otherwise speak a node stream. Only
// Config.Insecure (--insecure-cluster) accepts plain connections, and
// then serves no restore stream.
//
// After the handshake the dialling node writes one byte naming the stream
// it wants: raft's RPCs, a public or admin API request forwarded to the
// leader, or many public API requests forwarded at once, in frames. The
// accepting node answers with the same byte once it has taken the
// connection, so a dialler knows before it sends anything whether it
// was accepted: a refusal of any kind is a failed dial, which forwarding
// may retry without risk of running a request twice.

// stream is the kind of traffic a node connection carries. The bytes are
// none of raft's own RPC type bytes (0-4), so a node of an older version,
// which sends raft RPCs straight away, is refused rather than misread.
type stream byte

const (
	streamRaft   stream = 'R'
	streamPublic stream = 'P' // a public API request forwarded to the leader
	streamAdmin  stream = 'A' // an admin API request forwarded to the leader
	streamFrames stream = 'F' // public API requests forwarded to the leader, many at once
	// streamVersion is answered with the node's supported feature version
	// (versions.go). A release from before it refuses the byte, which the
	// leader takes as version 1.
	streamVersion stream = 'V'
	// streamMeta carries one proposal to the meta group's leader, from a
	// node of a sharded cluster that does not lead it (meta_rpc.go).
	streamMeta stream = 'M'
	// streamRestore carries one group's part of a restore to that group's
	// leader, from the meta leader of a sharded cluster
	// (groups_restore.go).
	streamRestore stream = 'S'
	// streamGroup is raft's RPCs of one group of a sharded cluster
	// (groups.go): two more bytes, big endian, name the group. Group 0
	// keeps streamRaft, so a cluster of one group speaks as before.
	streamGroup stream = 'G'
)

const (
	// nodeHandshakeTimeout bounds a connection's TLS handshake and stream
	// byte, and how long a taken connection waits to be accepted.
	nodeHandshakeTimeout = 10 * time.Second
	// nodeHandshakesMax bounds the connections being set up at once; past
	// it new ones are closed (a node retries; a flood cannot pile up). A
	// follower opens up to one per request in flight when load arrives.
	nodeHandshakesMax = 1024
	// acceptRetryDelay spaces retries when accepting fails (out of file
	// descriptors, say).
	acceptRetryDelay = 50 * time.Millisecond
)

// DialFunc opens a TCP connection to another node's raft address. Config
// may set one so that every node-to-node connection, raft's and
// forwarding's, goes through it (a test routes each pair of nodes through
// its own proxy); the TLS handshake runs over what it returns.
type DialFunc func(ctx context.Context, addr string) (net.Conn, error)

// nodeMux accepts node connections and hands each, by its stream byte, to
// the listener of that stream.
type nodeMux struct {
	ln         net.Listener
	tls        *tls.Config // the accepting side; nil: plain TCP
	streams    map[stream]*streamListener
	advertise  net.Addr
	groupsMu   sync.Mutex
	groups     map[uint16]*streamListener // streamGroup's listeners, by group
	log        *slog.Logger
	handshakes chan struct{} // a slot per connection being set up
	refused    atomic.Uint64
	refusedLog rate.Sometimes // refusals and accept errors, now and then
	closed     chan struct{}
	closeOnce  sync.Once
}

// listenNodes listens on addr for node connections. advertise is the
// address the listeners report (the one raft stores in its configuration).
func listenNodes(addr string, advertise net.Addr, nodeTLS *NodeTLS, log *slog.Logger) (*nodeMux, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	m := &nodeMux{
		ln:         ln,
		streams:    map[stream]*streamListener{},
		advertise:  advertise,
		groups:     map[uint16]*streamListener{},
		log:        log,
		handshakes: make(chan struct{}, nodeHandshakesMax),
		refusedLog: rate.Sometimes{First: 5, Interval: 10 * time.Second},
		closed:     make(chan struct{}),
	}
	if nodeTLS != nil {
		m.tls = nodeTLS.server
	}
	for _, s := range []stream{streamRaft, streamPublic, streamAdmin, streamFrames, streamVersion, streamMeta, streamRestore} {
		m.streams[s] = newStreamListener(advertise)
	}
	go m.serve()
	return m, nil
}

func (m *nodeMux) serve() {
	for {
		c, err := m.ln.Accept()
		if err != nil {
			select {
			case <-m.closed:
				return
			default:
			}
			m.refusedLog.Do(func() { m.log.Warn("node listener: accept failed", "err", err) })
			time.Sleep(acceptRetryDelay)
			continue
		}
		select {
		case m.handshakes <- struct{}{}:
		default:
			m.refuse(c, errors.New("too many node connections being set up at once"))
			continue
		}
		go func() {
			defer func() { <-m.handshakes }()
			m.route(c)
		}()
	}
}

// group returns the listener of group id's raft stream, made on first
// use. Until a group's node asks for it, a connection for it is refused.
func (m *nodeMux) group(id uint16) *streamListener {
	m.groupsMu.Lock()
	defer m.groupsMu.Unlock()
	l := m.groups[id]
	if l == nil {
		l = newStreamListener(m.advertise)
		m.groups[id] = l
		select {
		case <-m.closed:
			l.Close()
		default:
		}
	}
	return l
}

// knownGroup returns group id's listener, or nil when no node of this
// process runs that group.
func (m *nodeMux) knownGroup(id uint16) *streamListener {
	m.groupsMu.Lock()
	defer m.groupsMu.Unlock()
	return m.groups[id]
}

// route sets up c and hands it to its stream's listener.
func (m *nodeMux) route(c net.Conn) {
	conn, l, err := m.setUp(c)
	if err != nil {
		m.refuse(c, err)
		return
	}
	l.deliver(conn)
}

// setUp runs the TLS handshake, reads the stream's header (its byte, and a
// group's ID) and acknowledges it by sending the header back.
func (m *nodeMux) setUp(c net.Conn) (net.Conn, *streamListener, error) {
	if err := c.SetDeadline(time.Now().Add(nodeHandshakeTimeout)); err != nil {
		return nil, nil, err
	}
	if m.tls != nil {
		// A TLS connection opens with a handshake record; a node without
		// TLS opens with its stream byte and would otherwise wait out the
		// handshake timeout before it learns it was refused.
		var first [1]byte
		if _, err := io.ReadFull(c, first[:]); err != nil {
			return nil, nil, fmt.Errorf("read the TLS handshake: %w", err)
		}
		if first[0] != tlsHandshakeRecord {
			return nil, nil, errors.New("not a TLS connection (a node without the cluster's TLS settings?)")
		}
		tc := tls.Server(&replayConn{Conn: c, first: first[:]}, m.tls)
		if err := tc.Handshake(); err != nil {
			return nil, nil, fmt.Errorf("TLS handshake: %w", err)
		}
		c = tc
	}
	header := make([]byte, 1, 3)
	if _, err := io.ReadFull(c, header); err != nil {
		return nil, nil, fmt.Errorf("read the stream byte: %w", err)
	}
	l := m.streams[stream(header[0])]
	if stream(header[0]) == streamGroup {
		header = header[:3]
		if _, err := io.ReadFull(c, header[1:]); err != nil {
			return nil, nil, fmt.Errorf("read the group: %w", err)
		}
		id := binary.BigEndian.Uint16(header[1:])
		if l = m.knownGroup(id); l == nil {
			return nil, nil, fmt.Errorf("no group %d on this node", id)
		}
	}
	if l == nil {
		return nil, nil, fmt.Errorf("unknown stream byte %#x", header[0])
	}
	if m.tls == nil && stream(header[0]) == streamRestore {
		// A plain peer may be anyone, and a group's restore replaces its
		// accounts on the peer's word alone.
		return nil, nil, errors.New("a restore stream over plain TCP (--insecure-cluster)")
	}
	if _, err := c.Write(header); err != nil {
		return nil, nil, fmt.Errorf("acknowledge the stream: %w", err)
	}
	return c, l, c.SetDeadline(time.Time{})
}

// tlsHandshakeRecord is the content type of the record every TLS
// connection starts with.
const tlsHandshakeRecord = 0x16

// replayConn reads first before the rest of Conn.
type replayConn struct {
	net.Conn
	first []byte
}

func (c *replayConn) Read(p []byte) (int, error) {
	if len(c.first) > 0 {
		n := copy(p, c.first)
		c.first = c.first[n:]
		return n, nil
	}
	return c.Conn.Read(p)
}

// refuse closes a connection that did not prove itself a node, counts it,
// and says so in the log now and then (a scan must not flood the log).
func (m *nodeMux) refuse(c net.Conn, why error) {
	c.Close()
	m.refused.Add(1)
	m.refusedLog.Do(func() {
		m.log.Warn("refused a node connection", "remote", c.RemoteAddr().String(), "err", why, "refused_total", m.refused.Load())
	})
}

// close stops accepting and closes every stream's listener.
func (m *nodeMux) close() {
	m.closeOnce.Do(func() {
		close(m.closed)
		m.ln.Close()
		for _, l := range m.streams {
			l.Close()
		}
		m.groupsMu.Lock()
		for _, l := range m.groups {
			l.Close()
		}
		m.groupsMu.Unlock()
	})
}

// streamListener is the net.Listener of one stream.
type streamListener struct {
	addr      net.Addr
	conns     chan net.Conn
	closed    chan struct{}
	closeOnce sync.Once
}

var _ net.Listener = (*streamListener)(nil)

func newStreamListener(addr net.Addr) *streamListener {
	return &streamListener{addr: addr, conns: make(chan net.Conn), closed: make(chan struct{})}
}

// deliver hands c to Accept, or closes it when the listener is closed or
// nobody accepts it in time.
func (l *streamListener) deliver(c net.Conn) {
	t := time.NewTimer(nodeHandshakeTimeout)
	defer t.Stop()
	select {
	case l.conns <- c:
	case <-l.closed:
		c.Close()
	case <-t.C:
		c.Close()
	}
}

func (l *streamListener) Accept() (net.Conn, error) {
	select {
	case <-l.closed:
		return nil, net.ErrClosed
	default:
	}
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

func (l *streamListener) Close() error {
	l.closeOnce.Do(func() { close(l.closed) })
	return nil
}

func (l *streamListener) Addr() net.Addr { return l.addr }

// nodeDialer opens node connections.
type nodeDialer struct {
	tls  *tls.Config // the dialling side; nil: plain TCP
	dial DialFunc
}

func newNodeDialer(nodeTLS *NodeTLS, dial DialFunc) *nodeDialer {
	d := &nodeDialer{dial: dial}
	if d.dial == nil {
		var nd net.Dialer
		d.dial = func(ctx context.Context, addr string) (net.Conn, error) { return nd.DialContext(ctx, "tcp", addr) }
	}
	if nodeTLS != nil {
		d.tls = nodeTLS.client
	}
	return d
}

// open dials the node at addr for stream s and returns the connection once
// that node has accepted it, all within timeout.
func (d *nodeDialer) open(addr string, s stream, timeout time.Duration) (net.Conn, error) {
	return d.openHeader(addr, []byte{byte(s)}, timeout)
}

// openGroup dials the node at addr for the raft stream of group id.
func (d *nodeDialer) openGroup(addr string, id uint16, timeout time.Duration) (net.Conn, error) {
	return d.openHeader(addr, groupHeader(id), timeout)
}

// groupHeader is the stream header of group id's raft RPCs.
func groupHeader(id uint16) []byte {
	return binary.BigEndian.AppendUint16([]byte{byte(streamGroup)}, id)
}

// openHeader dials the node at addr, sends the stream's header and waits
// for it to come back.
func (d *nodeDialer) openHeader(addr string, header []byte, timeout time.Duration) (net.Conn, error) {
	if timeout <= 0 {
		timeout = nodeHandshakeTimeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	c, err := d.dial(ctx, addr)
	if err != nil {
		return nil, err
	}
	conn, err := d.setUp(ctx, c, header)
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("node connection to %s: %w", addr, err)
	}
	return conn, nil
}

func (d *nodeDialer) setUp(ctx context.Context, c net.Conn, header []byte) (net.Conn, error) {
	if deadline, has := ctx.Deadline(); has {
		if err := c.SetDeadline(deadline); err != nil {
			return nil, err
		}
	}
	if d.tls != nil {
		tc := tls.Client(c, d.tls)
		if err := tc.HandshakeContext(ctx); err != nil {
			return nil, fmt.Errorf("TLS handshake: %w", err)
		}
		c = tc
	}
	if _, err := c.Write(header); err != nil {
		return nil, err
	}
	// With TLS 1.3 the server checks the client's certificate after the
	// client's handshake has returned; its refusal arrives here.
	ack := make([]byte, len(header))
	if _, err := io.ReadFull(c, ack); err != nil {
		return nil, fmt.Errorf("not accepted: %w", err)
	}
	if !bytes.Equal(ack, header) {
		return nil, fmt.Errorf("not accepted: answered %#x for stream %#x", ack, header)
	}
	return c, c.SetDeadline(time.Time{})
}

// raftLayer is raft's StreamLayer over node connections: of group 0 on
// streamRaft, of any other group on streamGroup.
type raftLayer struct {
	*streamListener
	dialer *nodeDialer
	group  uint16
}

var _ raft.StreamLayer = raftLayer{}

func (l raftLayer) Dial(address raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	if l.group != 0 {
		return l.dialer.openGroup(string(address), l.group, timeout)
	}
	return l.dialer.open(string(address), streamRaft, timeout)
}

// sharedNet is a node's listener and dialer for node connections: a node
// of one group owns its own, and the groups of a sharded node share one.
type sharedNet struct {
	mux    *nodeMux
	dialer *nodeDialer
}

// listenShared listens on cfg.RaftAddr for node connections, advertising
// addr.
func listenShared(cfg Config, addr net.Addr) (*sharedNet, error) {
	if cfg.TLS == nil && !cfg.Insecure {
		return nil, errors.New("cluster: node connections need the cluster's TLS (or Insecure, for plain TCP)")
	}
	mux, err := listenNodes(cfg.RaftAddr, addr, cfg.TLS, cfg.Logger)
	if err != nil {
		return nil, fmt.Errorf("cluster: raft transport: %w", err)
	}
	return &sharedNet{mux: mux, dialer: newNodeDialer(cfg.TLS, cfg.Dial)}, nil
}
