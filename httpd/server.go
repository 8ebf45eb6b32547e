package httpd

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/fasthttp/router"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/actors"
	"github.com/addrwatch/addrwatch/chain"
	"github.com/addrwatch/addrwatch/httpd/activity"
	"github.com/addrwatch/addrwatch/httpd/admin"
	"github.com/addrwatch/addrwatch/httpd/balances"
	"github.com/addrwatch/addrwatch/httpd/edge"
	"github.com/addrwatch/addrwatch/httpd/forward"
	"github.com/addrwatch/addrwatch/httpd/site"
	"github.com/addrwatch/addrwatch/mcpserver/mcphttp"
	"github.com/addrwatch/addrwatch/notify/keys"
	"github.com/addrwatch/addrwatch/notify/send"
)

// Config wires a Server.
type Config struct {
	Store      Store
	Operator   admin.Operator
	Logger     *slog.Logger
	AdminToken string
	// Now is the clock; nil means time.Now. Tests inject their own.
	Now func() time.Time
	// PasswordCost is the bcrypt cost; zero means bcrypt's default.
	PasswordCost int
	// EdgeLimits applies the spec's per-client rate limits (--limits spec).
	EdgeLimits bool
	// SheetBudget applies the per-account Sheet-write budget (--limits spec
	// or account; off, for tests and load tests, disables it).
	SheetBudget bool
	// History reads address histories and transactions from the upstream.
	History History
	// StatusParts are added to the admin GET /admin/v1/cluster, each under
	// its name (the chain follower's counts).
	StatusParts map[string]func() any
	// Chain names the chain source for the owner's settings page.
	Chain site.ChainSource
	// Network is the Bitcoin network of the node (--network): of the
	// accounts it creates and of the addresses a label import reads;
	// empty means mainnet.
	Network chain.Network
	// Balances says what the cards' addresses hold; nil means the History
	// upstream's counters (balances.FromHistory(History)).
	Balances Balances
	// Metrics, when set, receives the request metrics and is served at
	// /metrics on the admin listener.
	Metrics *prometheus.Registry
	// Cluster, when set, makes a follower forward what it cannot serve to
	// the leader.
	Cluster forward.Cluster
	// TrustedProxies are the peers whose X-Forwarded-For names the client
	// IP for the edge rate limits, and whose X-Forwarded-Proto says whether
	// the client used HTTPS. Their connections are not capped.
	TrustedProxies []*net.IPNet
	// SpoolDir holds an uploaded backup until the restore has read it;
	// empty means the system's temporary directory.
	SpoolDir string
	// OpenMetrics serves /metrics without the operator token.
	OpenMetrics bool
	// SessionIdle is how long an unused owner session lives on (each use
	// extends it, up to sessionLifetime); zero means SessionIdleDefault.
	SessionIdle time.Duration
	// NodesUnauthenticated says node connections are plain TCP
	// (--insecure-cluster), open to any process that reaches the raft
	// port: a forwarded admin request then needs this node's admin token
	// too, as one on the admin listener does.
	NodesUnauthenticated bool
	// NotifyKey seals owners' notification URLs and derives webhook
	// secrets (--notify-key); nil refuses the notification channels'
	// creation and rotation (503).
	NotifyKey *keys.Key
	// NotifyEgress checks a new channel's URL as a send would
	// (notify/egress, with --notify-allow-private); nil refuses it too.
	NotifyEgress TargetChecker
	// NotifyWake tells this node's deliverer that an owner's change may
	// have made an account's notifications due now ("send again", a
	// channel enabled); nil tells nobody.
	NotifyWake func(account string)
	// NotifyTester sends "send a test" messages and says whether this
	// node sends email; nil refuses both tests and email channels.
	NotifyTester NotifyTester
}

// NotifyTester sends a channel a sample event now, outside the outbox
// (deliver.Channels).
type NotifyTester interface {
	Test(ctx context.Context, account string, ch actors.NotifyChannelTarget, at time.Time) send.Outcome
	// SendsEmail reports whether this node has an SMTP relay.
	SendsEmail() bool
}

// TargetChecker checks an owner's URL before a channel is made with it:
// its syntax and the addresses its host resolves to now
// (egress.Client.Check).
type TargetChecker interface {
	Check(ctx context.Context, raw string) error
}

// Server holds the public and admin handlers.
type Server struct {
	store Store
	// placement is the store's AccountPlacement on a sharded node; nil
	// otherwise (routing.go).
	placement      AccountPlacement
	admin          *admin.API
	log            *slog.Logger
	now            func() time.Time
	realClock      bool // now is time.Now (requestTime)
	passwordCost   int
	sheetBudget    bool
	history        History
	network        chain.Network    // --network; the empty Network is mainnet
	chain          site.ChainSource // named on the settings page
	balances       Balances
	limits         *edge.Limits       // nil when limits are off
	forward        *forward.Forwarder // nil without a cluster
	metrics        *edge.RequestMetrics
	activity       *activity.Log
	mcp            *mcphttp.Endpoint // /v1/mcp, once the public routes are built
	connsPerClient int               // 0: no connection cap
	trustedProxies []*net.IPNet      // whose X-Forwarded-For and X-Forwarded-Proto are believed; not capped

	// The owner credential limits apply whatever --limits says.
	owner   *edge.OwnerLimits
	hashing *hashSlots
	// dummyPasswordHash, at this server's cost, stands in for the hash of
	// an account that does not exist (service.go).
	dummyPasswordHash string
	// use records when keys and sessions are used (credential_use.go,
	// through s.query).
	use *credentialUse
	// labelImports are the accounts importing labels (labels_import.go).
	labelImports labelImportsRunning
	// nodesUnauthenticated: node connections are plain TCP, so the
	// forwarded admin listener checks the admin token too.
	nodesUnauthenticated bool
	// notifyKey and notifyEgress serve the notification channels
	// (notifications.go); nil when the node has none.
	notifyKey    *keys.Key
	notifyEgress TargetChecker
	notifyWake   func(account string)
	notifyTester NotifyTester
}

// New builds a Server.
func New(cfg Config) *Server {
	s := &Server{store: cfg.Store, log: cfg.Logger, now: cfg.Now, passwordCost: cfg.PasswordCost, sheetBudget: cfg.SheetBudget, history: cfg.History, network: cfg.Network, chain: cfg.Chain}
	if s.now == nil {
		s.now, s.realClock = time.Now, true
	}
	if cfg.Logger != nil {
		unnamedFailureLog.Store(cfg.Logger)
	}
	if s.balances = cfg.Balances; s.balances == nil && cfg.History != nil {
		s.balances = balances.FromHistory(cfg.History)
	}
	s.use = newCredentialUse(cfg.Store, s.now, cfg.SessionIdle)
	s.placement, _ = cfg.Store.(AccountPlacement)
	s.activity = activity.New(cfg.Store, s.now, s.log)
	if cfg.EdgeLimits {
		s.limits = newEdgeLimits(cfg.TrustedProxies, s.now)
		s.connsPerClient = edge.ConnsPerClientMax
	}
	s.trustedProxies, s.nodesUnauthenticated = cfg.TrustedProxies, cfg.NodesUnauthenticated
	s.notifyKey, s.notifyEgress = cfg.NotifyKey, cfg.NotifyEgress
	s.notifyWake, s.notifyTester = cfg.NotifyWake, cfg.NotifyTester
	s.owner, s.hashing = newOwnerLimits(cfg.TrustedProxies, s.now), newHashSlots(runtime.GOMAXPROCS(0))
	s.dummyPasswordHash = dummyPasswordHash(s.bcryptCost())
	if cfg.Metrics != nil {
		s.metrics = edge.NewRequestMetrics(cfg.Metrics)
	}
	s.admin = s.newAdmin(cfg)
	if cfg.Cluster != nil {
		s.forward = s.newForwarder(cfg)
	}
	return s
}

// routeAdder is the part of the router the route files use.
type routeAdder interface {
	GET(path string, handler fasthttp.RequestHandler)
	POST(path string, handler fasthttp.RequestHandler)
	PUT(path string, handler fasthttp.RequestHandler)
	PATCH(path string, handler fasthttp.RequestHandler)
	DELETE(path string, handler fasthttp.RequestHandler)
	Handle(method, path string, handler fasthttp.RequestHandler)
}

// onlyMethods pins the methods of a static path that shares its place in
// the tree with a parameter route (".../cards/validate" beside
// ".../cards/{card_id}"): without it, GET on the static path would fall
// through to the parameter route and OPTIONS would list its methods.
func onlyMethods(r interface {
	Handle(method, path string, handler fasthttp.RequestHandler)
}, path string, allowed ...string) {
	allow := strings.Join(append([]string{fasthttp.MethodOptions}, allowed...), ", ")
	r.Handle(fasthttp.MethodOptions, path, func(ctx *fasthttp.RequestCtx) {
		ctx.Response.Header.Set(fasthttp.HeaderAllow, allow)
		ctx.SetStatusCode(fasthttp.StatusNoContent)
	})
	for _, m := range routeMethods {
		if slices.Contains(allowed, m) {
			continue
		}
		r.Handle(m, path, func(ctx *fasthttp.RequestCtx) {
			ctx.Response.Header.Set(fasthttp.HeaderAllow, allow)
			writeError(ctx, actors.Errorf(codeMethodNotAllowed, "method %s is not allowed here; see the Allow header", ctx.Method()))
		})
	}
}

// PublicHandler serves the agent API (/v1) and the owner API (/owner/v1)
// to clients.
func (s *Server) PublicHandler() fasthttp.RequestHandler {
	return sayWhenToRetry(forward.IgnoreNodeHeaders(s.publicRoutes(false)))
}

// publicRoutes is the public API. Outside in: limit the client, pass what
// this node cannot serve to the leader, measure, route. The chain is
// built for one listener: forwarded says it serves the node connections
// of other nodes (ForwardedPublicHandler), whose every request was
// forwarded: it is not limited here (the node that received it limited
// it) and never forwarded again.
func (s *Server) publicRoutes(forwarded bool) fasthttp.RequestHandler {
	r := s.newRouter()
	s.registerAgent(r)
	s.registerOwner(r)
	owners := s.newSite()
	owners.Register(r)
	r.pageNotFound = owners.NotFound
	r.pageMethodNotAllowed = owners.MethodNotAllowed
	h := r.Handler
	if s.metrics != nil {
		h = s.metrics.Wrap(h)
	}
	// A tool call of /v1/mcp goes through what a /v1 request meets on the
	// node that serves it: the limits (mcpHost.Run), the measuring, the
	// routes.
	s.registerMCP(r, h)
	if forwarded {
		if s.forward != nil {
			h = s.forward.Received(h)
		}
		return h
	}
	if s.forward != nil {
		h = s.forward.Handler(false, servedLocally, h)
	}
	if s.limits != nil {
		h = s.limits.Wrap(h)
	}
	return h
}

// AdminHandler serves the admin API and the health endpoints to clients.
func (s *Server) AdminHandler() fasthttp.RequestHandler {
	return sayWhenToRetry(forward.IgnoreNodeHeaders(s.adminRoutes(false)))
}

// adminRoutes is the admin API: the token is checked before anything else,
// forwarding to the leader included. forwarded says the chain serves the
// node connections of other nodes (ForwardedAdminHandler): the node that
// forwarded a request checked its token, unless node connections are
// plain TCP (Config.NodesUnauthenticated), and it is never forwarded
// again.
func (s *Server) adminRoutes(forwarded bool) fasthttp.RequestHandler {
	r := s.newRouter()
	s.admin.Register(r)
	h := r.Handler
	switch {
	case s.forward == nil:
	case forwarded:
		h = s.forward.Received(h)
	default:
		h = s.forward.Handler(true, admin.ServedLocally, h)
	}
	return s.admin.Gate(r.Router, h, forwarded && !s.nodesUnauthenticated)
}

// siteAssetsPrefix is where the site's embedded stylesheet and scripts are.
var siteAssetsPrefix = []byte(site.AssetsPrefix)

// servedLocally lists public paths every node answers itself: the
// documents and the site's assets, which are the same everywhere.
func servedLocally(path []byte) bool {
	return bytes.HasPrefix(path, docsPathPrefix) || bytes.HasSuffix(path, []byte("/openapi.json")) || bytes.HasPrefix(path, siteAssetsPrefix)
}

// newRouter returns a router whose every non-route answer has the error
// shape: 404 for an unknown path (the site's HTML page instead, once
// pageNotFound is set, for a browser's page: wantsSitePage), 405 with Allow
// for a wrong method (an HTML page likewise, pageMethodNotAllowed), 204
// with Allow for OPTIONS, 307 to the path without a trailing slash, and
// 500 for a recovered panic.
func (s *Server) newRouter() labeledRouter {
	r := router.New()
	lr := labeledRouter{r, &notFoundPage{}}
	r.RedirectTrailingSlash = false // we redirect with 307, below
	r.RedirectFixedPath = false
	r.HandleMethodNotAllowed = true
	r.HandleOPTIONS = true
	r.GlobalOPTIONS = func(ctx *fasthttp.RequestCtx) { ctx.SetStatusCode(fasthttp.StatusNoContent) }
	r.MethodNotAllowed = func(ctx *fasthttp.RequestCtx) {
		if lr.pageMethodNotAllowed != nil && wantsSitePage(ctx) {
			lr.pageMethodNotAllowed(ctx)
			return
		}
		writeError(ctx, actors.Errorf(codeMethodNotAllowed, "method %s is not allowed here; see the Allow header", ctx.Method()))
	}
	r.NotFound = func(ctx *fasthttp.RequestCtx) {
		// The route is looked up by the normalised path, as the router
		// matches, and the Location is built from it (edge/path.go).
		path := string(ctx.Path())
		if trimmed := strings.TrimRight(path, "/"); trimmed != path && trimmed != "" && routeExists(r, trimmed, ctx) {
			ctx.Response.Header.Set(fasthttp.HeaderLocation, edge.RedirectTarget(trimmed, ctx.URI().QueryString()))
			ctx.SetStatusCode(fasthttp.StatusTemporaryRedirect)
			return
		}
		if lr.pageNotFound != nil && wantsSitePage(ctx) {
			lr.pageNotFound(ctx)
			return
		}
		writeError(ctx, actors.Errorf(actors.CodeNotFound, "no such path"))
	}
	r.PanicHandler = func(ctx *fasthttp.RequestCtx, v any) {
		s.log.Error("recovered panic in handler", "path", string(ctx.Path()), "panic", fmt.Sprint(v))
		ctx.Response.Reset()
		writeError(ctx, actors.Errorf(actors.CodeInternal, "internal error"))
	}
	return lr
}

// labeledRouter is a router whose every route notes its pattern as its
// requests' route label, for the request metrics (edge.RouteLabeled).
// Routes are added through it; its Router is for looking them up.
// pageNotFound, when set, answers an unknown path that a browser asked
// for as a page (wantsSitePage) with the site's HTML 404 page, and
// pageMethodNotAllowed a wrong method there with its HTML 405.
type labeledRouter struct {
	*router.Router
	*notFoundPage
}

// notFoundPage holds the router's HTML 404 and 405, set once its routes
// are registered (the site that draws them is registered on the same
// router).
type notFoundPage struct {
	pageNotFound, pageMethodNotAllowed fasthttp.RequestHandler
}

// notPagePrefixes are the public paths whose unknown paths are never a
// site page, whoever asks: the agent API, the owner API (all of /owner,
// its version too) and the site's assets. Matched without regard to case,
// so /V1/me is an API path too.
var notPagePrefixes = [][]byte{[]byte(agentPrefix), []byte(ownerPrefix[:strings.LastIndexByte(ownerPrefix, '/')]), bytes.TrimSuffix(siteAssetsPrefix, []byte("/"))}

// wantsSitePage reports whether an unknown path should be answered with
// the site's HTML 404 page rather than the APIs' JSON error: a browser
// asking for a page (its Accept names text/html) at a path outside
// notPagePrefixes. An API client, a script or curl gets the error shape
// at every unknown path, as the spec says.
func wantsSitePage(ctx *fasthttp.RequestCtx) bool {
	path := bytes.ToLower(ctx.Path())
	for _, prefix := range notPagePrefixes {
		if rest, under := bytes.CutPrefix(path, prefix); under && (len(rest) == 0 || rest[0] == '/') {
			return false
		}
	}
	return bytes.Contains(ctx.Request.Header.Peek(fasthttp.HeaderAccept), []byte("text/html"))
}

func (r labeledRouter) Handle(method, path string, h fasthttp.RequestHandler) {
	r.Router.Handle(method, path, edge.RouteLabeled(path, h))
}

func (r labeledRouter) GET(path string, h fasthttp.RequestHandler) {
	r.Handle(fasthttp.MethodGet, path, h)
}

func (r labeledRouter) POST(path string, h fasthttp.RequestHandler) {
	r.Handle(fasthttp.MethodPost, path, h)
}

func (r labeledRouter) PUT(path string, h fasthttp.RequestHandler) {
	r.Handle(fasthttp.MethodPut, path, h)
}

func (r labeledRouter) PATCH(path string, h fasthttp.RequestHandler) {
	r.Handle(fasthttp.MethodPatch, path, h)
}

func (r labeledRouter) DELETE(path string, h fasthttp.RequestHandler) {
	r.Handle(fasthttp.MethodDelete, path, h)
}

var routeMethods = []string{fasthttp.MethodGet, fasthttp.MethodPost, fasthttp.MethodPut, fasthttp.MethodPatch, fasthttp.MethodDelete}

func routeExists(r *router.Router, path string, ctx *fasthttp.RequestCtx) bool {
	for _, m := range routeMethods {
		if h, _ := r.Lookup(m, path, ctx); h != nil {
			return true
		}
	}
	return false
}
