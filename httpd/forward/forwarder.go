package forward

import (
	"errors"
	"net"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/actors"
)

// Forwarding: a follower serves every request it cannot answer itself by
// passing it to the leader over a node connection (public requests many
// at once on one framed connection, frames.go; others on pooled
// connections, one at a time) and relaying the answer, so a client never
// needs to know which node leads. The leader serves such requests on
// listeners only nodes reach (Receive), and that alone marks them
// forwarded: nothing a request carries can. During an election a request
// waits a bounded time for a leader; with none it fails with a clear 503.
const (
	leaderWaitMax      = 5 * time.Second
	leaderPoll         = 10 * time.Millisecond
	forwardTimeout     = 30 * time.Second
	forwardDialTimeout = 5 * time.Second
	forwardConnsMax    = 512
)

// forwardTarget is one leader's listener of one kind of forwarded request.
type forwardTarget struct {
	addr  string
	admin bool
}

// Config wires a Forwarder.
type Config struct {
	// Cluster says where the leader is and opens node connections to it.
	Cluster Cluster
	// Route names the account a request acts on, for a ShardedCluster;
	// nil names none.
	Route func(ctx *fasthttp.RequestCtx) string
	// ClientIP names the request's client, and ClientHTTPS says whether
	// it used HTTPS, as this node's edge sees them; the leader is told
	// both.
	ClientIP    func(ctx *fasthttp.RequestCtx) string
	ClientHTTPS func(ctx *fasthttp.RequestCtx) bool
	// Streamed picks the requests whose answers are relayed as the leader
	// writes them (stream.go), which may take StreamTimeout.
	Streamed      func(method, requestURI []byte) bool
	StreamTimeout time.Duration
	// WriteError writes err as the answer, in the spec's {code, error}.
	WriteError func(ctx *fasthttp.RequestCtx, err error)
	// Metrics, when set, receives addrwatch_forwarded_requests_total.
	Metrics prometheus.Registerer
}

// Forwarder passes what this node cannot serve to the leader.
type Forwarder struct {
	cfg Config
	// timeout replaces forwardTimeout when set (tests).
	timeout time.Duration
	mu      sync.Mutex
	clients map[forwardTarget]*fasthttp.HostClient

	// The framed connection to each leader (one unless the cluster is
	// sharded), and when each leader last refused one (client.go).
	framesMu      sync.Mutex
	framed        map[string]*framedConn
	framesRefused map[string]time.Time

	// relayed counts the requests sent to the leader, by how they went
	// (nil: not counted).
	relayed *prometheus.CounterVec
}

// New returns a Forwarder to cfg.Cluster's leaders.
func New(cfg Config) *Forwarder {
	f := &Forwarder{cfg: cfg, clients: map[forwardTarget]*fasthttp.HostClient{}}
	if cfg.Metrics != nil {
		f.relayed = prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "addrwatch_forwarded_requests_total",
			Help: "Requests this node passed to the leader, by how: framed (many public requests on one connection), public or admin (one per connection), download (a History CSV, streamed).",
		}, []string{"way"})
		cfg.Metrics.MustRegister(f.relayed)
	}
	return f
}

// Ways a forwarded request goes, as addrwatch_forwarded_requests_total
// labels them.
const (
	relayFramed   = "framed"   // a public request in a frame
	relayOwn      = "public"   // a public request on a connection of its own
	relayAdmin    = "admin"    // an admin request on a connection of its own
	relayDownload = "download" // a History CSV, streamed
)

func (f *Forwarder) count(way string) {
	if f.relayed != nil {
		f.relayed.WithLabelValues(way).Inc()
	}
}

// answerTimeout is how long the leader's whole answer to a request that
// is not streamed may take.
func (f *Forwarder) answerTimeout() time.Duration {
	if f.timeout > 0 {
		return f.timeout
	}
	return forwardTimeout
}

func (f *Forwarder) client(target forwardTarget) *fasthttp.HostClient {
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
func (f *Forwarder) newClient(target forwardTarget, readTimeout time.Duration, watch func(net.Conn) net.Conn) *fasthttp.HostClient {
	// One attempt only: fasthttp would otherwise resend a GET or PUT
	// whose connection broke, and a PUT the leader had already
	// applied would run twice. Retrying is decided in Handler, where
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
			conn, err := f.cfg.Cluster.DialNode(addr, stream, timeout)
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

// Handler passes a request a client sent this node to the leader when
// this node cannot serve it, and gives next the others. admin picks the
// leader's forwarded admin requests. local lists paths always served here.
// It is the step of a listener clients reach; the listeners other nodes
// reach have Received instead.
func (f *Forwarder) Handler(admin bool, local func(path []byte) bool, next fasthttp.RequestHandler) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		group := f.groupOf(ctx)
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
				f.cfg.WriteError(ctx, actors.Errorf(actors.CodeHTTPError, "no leader is available; the cluster may be electing one or may have lost its majority; retry shortly"))
				return
			}
			time.Sleep(leaderPoll)
		}
	}
}

// Received gives next a request another node forwarded: it is never
// forwarded again. If this node has just become the leader of the
// request's group it waits for its log to apply; otherwise it answers.
// It is the step of a listener only other nodes reach, where every
// request was forwarded: the chain knows it, nothing on the request says
// so.
func (f *Forwarder) Received(next fasthttp.RequestHandler) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		awaitServing(f.groupOf(ctx))
		next(ctx)
	}
}

// groupOf is the raft group whose leader serves the request: the node's
// only one, or in a sharded cluster its account's (Config.Route).
func (f *Forwarder) groupOf(ctx *fasthttp.RequestCtx) Leadership {
	sharded, isSharded := f.cfg.Cluster.(ShardedCluster)
	if !isSharded {
		return f.cfg.Cluster
	}
	account := ""
	if f.cfg.Route != nil {
		account = f.cfg.Route(ctx)
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
func (f *Forwarder) forward(ctx *fasthttp.RequestCtx, target forwardTarget, retry bool) bool {
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
	req.Header.Set(clientIPHeader, f.cfg.ClientIP(ctx))
	req.Header.Set(clientProtoHeader, clientProto(f.cfg.ClientHTTPS(ctx)))
	err := f.relay(ctx, target, req)
	if err == nil {
		return true
	}
	ctx.Response.Reset()
	var dial *dialError
	if retry && errors.As(err, &dial) {
		return false
	}
	f.cfg.WriteError(ctx, actors.Errorf(actors.CodeHTTPError, "the leader could not be reached; a write may or may not have been applied, so re-read before retrying"))
	return true
}

// relay sends req to target and sets ctx's answer to the leader's: a
// download streamed on a connection of its own, another public request
// over the framed connection when the leader takes one, and anything else
// on a pooled connection of its own while it is in flight.
func (f *Forwarder) relay(ctx *fasthttp.RequestCtx, target forwardTarget, req *fasthttp.Request) error {
	if f.cfg.Streamed != nil && f.cfg.Streamed(ctx.Method(), ctx.RequestURI()) {
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

// copyRequest copies a request to be forwarded, its streamed body
// included: fasthttp's CopyTo takes only the part of a streamed body read
// so far.
func copyRequest(dst *fasthttp.Request, src *fasthttp.RequestCtx) {
	src.Request.CopyTo(dst)
	if stream := src.RequestBodyStream(); stream != nil {
		dst.SetBodyStream(stream, src.Request.Header.ContentLength())
	}
}
