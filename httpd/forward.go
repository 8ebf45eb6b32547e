package httpd

import (
	"errors"
	"net"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/actors"
	"github.com/addrwatch/addrwatch/httpd/edge"
)

// Cluster is what forwarding needs from the node.
type Cluster interface {
	Leadership
	// DialNode opens a node connection to addr for stream. Only nodes can
	// open one (mutual TLS with the cluster CA). An error means nothing
	// was sent.
	DialNode(addr string, stream NodeStream, timeout time.Duration) (net.Conn, error)
}

// Leadership is where one raft group's leader is, as this node sees it.
type Leadership interface {
	// Serving reports whether this node answers requests itself.
	Serving() bool
	// Leading reports whether this node leads, serving or not yet (a new
	// leader first applies the log of earlier terms).
	Leading() bool
	// Leader returns the node address of the leader, or false while none
	// is known or this node leads.
	Leader() (addr string, known bool)
}

// ShardedCluster is a Cluster whose accounts live in several raft groups
// (cluster.Groups), each with a leader of its own: a request goes to the
// leader of its account's group.
type ShardedCluster interface {
	Cluster
	// For is the group of account. The empty account is a request that
	// names none (creating an account, say); it gets a group picked at
	// random each time, so that such requests, and the accounts they
	// create (AccountPlacement), spread evenly over the groups.
	For(account string) Leadership
}

// NodeStream is the kind of node connection a follower opens to forward.
type NodeStream uint8

const (
	// StreamPublic carries one public request at a time, as HTTP.
	StreamPublic NodeStream = iota + 1
	// StreamAdmin carries one admin request at a time, as HTTP.
	StreamAdmin
	// StreamFrames carries many public requests at once, in frames
	// (forward_frames.go).
	StreamFrames
)

// Forwarding: a follower serves every request it cannot answer itself by
// passing it to the leader over a node connection (public requests many
// at once on one framed connection, forward_frames*.go; others on pooled
// connections, one at a time) and relaying the answer, so a client never
// needs to know which node leads. The leader
// serves such requests on listeners only nodes reach (ForwardedPublicHandler
// and ForwardedAdminHandler), and that alone marks them forwarded: nothing a
// request carries can. During an election a request waits a bounded time
// for a leader; with none it fails with a clear 503.
const (
	leaderWaitMax      = 5 * time.Second
	leaderPoll         = 10 * time.Millisecond
	forwardTimeout     = 30 * time.Second
	forwardDialTimeout = 5 * time.Second
	forwardConnsMax    = 512
)

// Headers only a node connection may carry. clientIPHeader names the
// client of a forwarded request, as the follower's edge saw it, so that the
// leader's per-client limits see that client rather than the follower;
// clientProtoHeader says whether that client used HTTPS (edge/tls.go).
// legacyForwardedHeader once carried a secret that made a request count as
// forwarded; it means nothing now. A client's own copies are dropped.
const (
	clientIPHeader        = "X-Addrwatch-Client-IP"
	clientProtoHeader     = "X-Addrwatch-Client-Proto"
	legacyForwardedHeader = "X-Addrwatch-Forwarded"
)

// forwardedKey marks a request that arrived over a node connection: its
// client was rate limited, and its admin token checked, by the node that
// forwarded it (nodes may have different admin tokens).
// forwardedClientKey holds the client IP that node named, and
// forwardedHTTPSKey whether that node saw the client use HTTPS.
const (
	forwardedKey       = "addrwatch.forwarded"
	forwardedClientKey = "addrwatch.forwarded_client"
	forwardedHTTPSKey  = "addrwatch.forwarded_https"
)

// forwarded reports whether the request arrived over a node connection.
func forwarded(ctx *fasthttp.RequestCtx) bool { return ctx.UserValue(forwardedKey) != nil }

// ignoreNodeHeaders drops, on a listener clients reach, the headers that
// only mean something on a node connection.
func ignoreNodeHeaders(next fasthttp.RequestHandler) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		ctx.Request.Header.Del(clientIPHeader)
		ctx.Request.Header.Del(clientProtoHeader)
		ctx.Request.Header.Del(legacyForwardedHeader)
		next(ctx)
	}
}

// receiveForwarded marks a request that arrived over a node connection as
// forwarded and takes its client's IP and scheme from the node that sent
// it.
func receiveForwarded(next fasthttp.RequestHandler) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		ctx.SetUserValue(forwardedKey, true)
		if ip := net.ParseIP(string(ctx.Request.Header.Peek(clientIPHeader))); ip != nil {
			ctx.SetUserValue(forwardedClientKey, ip.String())
		}
		ctx.SetUserValue(forwardedHTTPSKey, string(ctx.Request.Header.Peek(clientProtoHeader)) == "https")
		ctx.Request.Header.Del(clientIPHeader)
		ctx.Request.Header.Del(clientProtoHeader)
		ctx.Request.Header.Del(legacyForwardedHeader)
		next(ctx)
	}
}

// forwardTarget is one leader's listener of one kind of forwarded request.
type forwardTarget struct {
	addr  string
	admin bool
}

type forwarder struct {
	cluster Cluster
	// route names the account a request acts on, for a ShardedCluster
	// (routing.go); nil names none.
	route   func(ctx *fasthttp.RequestCtx) string
	trusted []*net.IPNet // for the client IP a forwarded request names
	// timeout replaces forwardTimeout when set (tests).
	timeout time.Duration
	mu      sync.Mutex
	clients map[forwardTarget]*fasthttp.HostClient

	// The framed connection to each leader (one unless the cluster is
	// sharded), and when each leader last refused one
	// (forward_frames_client.go).
	framesMu      sync.Mutex
	framed        map[string]*framedConn
	framesRefused map[string]time.Time

	// relayed counts the requests sent to the leader, by how they went
	// (nil: not counted).
	relayed *prometheus.CounterVec
}

// Ways a forwarded request goes, as addrwatch_forwarded_requests_total
// labels them.
const (
	relayFramed   = "framed"   // a public request in a frame
	relayOwn      = "public"   // a public request on a connection of its own
	relayAdmin    = "admin"    // an admin request on a connection of its own
	relayDownload = "download" // a History CSV, streamed
)

func (f *forwarder) count(way string) {
	if f.relayed != nil {
		f.relayed.WithLabelValues(way).Inc()
	}
}

// answerTimeout is how long the leader's whole answer to a request that
// is not streamed may take.
func (f *forwarder) answerTimeout() time.Duration {
	if f.timeout > 0 {
		return f.timeout
	}
	return forwardTimeout
}

func (f *forwarder) client(target forwardTarget) *fasthttp.HostClient {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.clients[target]
	if c == nil {
		c = f.newClient(target, f.answerTimeout(), nil)
		f.clients[target] = c
	}
	return c
}

// newClient returns a client of target's node connections, which reads an
// answer within readTimeout. watch, if set, is given each connection the
// client opens and returns the one the client uses.
func (f *forwarder) newClient(target forwardTarget, readTimeout time.Duration, watch func(net.Conn) net.Conn) *fasthttp.HostClient {
	// One attempt only: fasthttp would otherwise resend a GET or PUT
	// whose connection broke, and a PUT the leader had already
	// applied would run twice. Retrying is decided in send(), where
	// only a failed dial (nothing sent) is retried.
	return &fasthttp.HostClient{Addr: target.addr, MaxConns: forwardConnsMax, ReadTimeout: readTimeout, WriteTimeout: forwardTimeout,
		NoDefaultUserAgentHeader: true, DisablePathNormalizing: true, MaxIdemponentCallAttempts: 1,
		RetryIfErr: func(*fasthttp.Request, int, error) (bool, bool) { return false, false },
		DialTimeout: func(addr string, timeout time.Duration) (net.Conn, error) {
			if timeout <= 0 || timeout > forwardDialTimeout {
				timeout = forwardDialTimeout
			}
			stream := StreamPublic
			if target.admin {
				stream = StreamAdmin
			}
			conn, err := f.cluster.DialNode(addr, stream, timeout)
			if err != nil {
				return nil, &dialError{err}
			}
			if watch != nil {
				conn = watch(conn)
			}
			return conn, nil
		}}
}

// dialError is a node connection that could not be opened: nothing was
// sent, so the request may go to the next leader.
type dialError struct{ err error }

func (e *dialError) Error() string { return "dial the leader: " + e.err.Error() }
func (e *dialError) Unwrap() error { return e.err }

// send passes a request this node cannot serve to the leader. admin picks
// the leader's forwarded admin requests. local lists paths always served
// here. A forwarded request is never forwarded again: if this node has just
// become leader it waits for its log to apply, and otherwise it answers.
func (f *forwarder) send(admin bool, local func(path []byte) bool, next fasthttp.RequestHandler) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		group := f.groupOf(ctx)
		if forwarded(ctx) {
			awaitServing(group)
			next(ctx)
			return
		}
		if group.Serving() || local(ctx.Path()) {
			next(ctx)
			return
		}
		deadline := time.Now().Add(leaderWaitMax)
		for {
			if group.Serving() {
				next(ctx)
				return
			}
			if addr, known := group.Leader(); known {
				// A leader that cannot be dialled is usually one that just
				// died: nothing was sent, so wait for the next one.
				if sent := f.forward(ctx, forwardTarget{addr: addr, admin: admin}, time.Now().Before(deadline)); sent {
					return
				}
			}
			if time.Now().After(deadline) {
				writeError(ctx, actors.Errorf(actors.CodeHTTPError, "no leader is available; the cluster may be electing one or may have lost its majority; retry shortly"))
				return
			}
			time.Sleep(leaderPoll)
		}
	}
}

// groupOf is the raft group whose leader serves the request: the node's
// only one, or in a sharded cluster its account's (routing.go).
func (f *forwarder) groupOf(ctx *fasthttp.RequestCtx) Leadership {
	sharded, isSharded := f.cluster.(ShardedCluster)
	if !isSharded {
		return f.cluster
	}
	account := ""
	if f.route != nil {
		account = f.route(ctx)
	}
	return sharded.For(account)
}

// awaitServing waits, on a node that leads group but does not serve yet,
// until it does: followers forward to a new leader as soon as raft names
// it.
func awaitServing(group Leadership) {
	deadline := time.Now().Add(leaderWaitMax)
	for !group.Serving() && group.Leading() && time.Now().Before(deadline) {
		time.Sleep(leaderPoll)
	}
}

// forward relays the request to the leader. It reports false, having
// written nothing, when the leader could not be dialled and retry is
// allowed.
func (f *forwarder) forward(ctx *fasthttp.RequestCtx, target forwardTarget, retry bool) bool {
	req := fasthttp.AcquireRequest()
	defer fasthttp.ReleaseRequest(req)
	copyRequest(req, ctx)
	// The hop is plain HTTP inside the node connection, whatever the
	// client's scheme; the client's Host is kept. An HTTP/1.0 client may
	// send none, and HTTP/1.1 needs one: the hop then names the leader,
	// as a proxy would (no browser's Origin can match it).
	req.URI().SetScheme("http")
	if len(req.Header.Host()) == 0 {
		req.Header.SetHost(target.addr)
		req.URI().SetHost(target.addr)
	}
	req.Header.Set(clientIPHeader, clientIP(ctx, f.trusted))
	req.Header.Set(clientProtoHeader, clientProto(ctx, f.trusted))
	err := f.relay(ctx, target, req)
	if err == nil {
		return true
	}
	ctx.Response.Reset()
	var dial *dialError
	if retry && errors.As(err, &dial) {
		return false
	}
	writeError(ctx, actors.Errorf(actors.CodeHTTPError, "the leader could not be reached; a write may or may not have been applied, so re-read before retrying"))
	return true
}

// relay sends req to target and sets ctx's answer to the leader's: a
// download streamed on a connection of its own, another public request
// over the framed connection when the leader takes one, and anything else
// on a pooled connection of its own while it is in flight.
func (f *forwarder) relay(ctx *fasthttp.RequestCtx, target forwardTarget, req *fasthttp.Request) error {
	if isHistoryCSV(ctx.Method(), ctx.RequestURI()) {
		f.count(relayDownload)
		return f.forwardStream(ctx, target, req)
	}
	way := relayAdmin
	if !target.admin {
		if framed, err := f.framedTo(target.addr); err == nil {
			f.count(relayFramed)
			return framed.do(req, &ctx.Response, f.answerTimeout())
		}
		way = relayOwn
	}
	f.count(way)
	return f.client(target).DoTimeout(req, &ctx.Response, f.answerTimeout())
}

// NewNodeHTTPServer returns the server for requests other nodes forward
// over node connections: the public listener's edge rules, or the admin
// listener's when admin is set (a restore's backup file may be forwarded,
// streamed). It has no per-client connection cap: all of a follower's
// clients share its pooled connections, and a node connection is already
// a proven node.
func (s *Server) NewNodeHTTPServer(name string, handler fasthttp.RequestHandler, admin bool) *edge.Server {
	srv := s.newHTTPServer(name, handler, admin)
	srv.Uncap()
	return srv
}

// ForwardedPublicHandler serves public requests other nodes forward (on
// the node's forwarded public listener): the same routes as PublicHandler,
// without this node's edge limits (the forwarding node applied its own).
func (s *Server) ForwardedPublicHandler() fasthttp.RequestHandler {
	return receiveForwarded(s.publicRoutes())
}

// ForwardedAdminHandler serves admin requests other nodes forward (on the
// node's forwarded admin listener): the same routes as AdminHandler; the
// forwarding node checked the caller's admin token (and this one checks it
// again when nodes are not authenticated, Config.NodesUnauthenticated).
func (s *Server) ForwardedAdminHandler() fasthttp.RequestHandler {
	return receiveForwarded(s.adminRoutes())
}
