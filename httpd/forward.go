package httpd

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/httpd/edge"
	"github.com/addrwatch/addrwatch/httpd/forward"
)

// Forwarding to the leader lives in httpd/forward; this wires it to the
// Server: a follower's forwarder (in front of the public and admin
// routes, server.go), and the leader's listeners only nodes reach, which
// serve what followers forward.

// newForwarder returns the forwarder to cfg.Cluster's leaders.
func (s *Server) newForwarder(cfg Config) *forward.Forwarder {
	var metrics prometheus.Registerer
	if cfg.Metrics != nil {
		metrics = cfg.Metrics
	}
	who := clients(cfg.TrustedProxies)
	return forward.New(forward.Config{
		Cluster:       cfg.Cluster,
		Route:         s.routingAccount,
		ClientIP:      who.IP,
		ClientHTTPS:   who.IsHTTPS,
		Streamed:      isHistoryCSV,
		StreamTimeout: historyCSVWriteTimeout,
		WriteError:    writeError,
		Metrics:       metrics,
	})
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
	return forward.Receive(s.publicRoutes(true))
}

// ForwardedAdminHandler serves admin requests other nodes forward (on the
// node's forwarded admin listener): the same routes as AdminHandler; the
// forwarding node checked the caller's admin token (and this one checks it
// again when nodes are not authenticated, Config.NodesUnauthenticated).
func (s *Server) ForwardedAdminHandler() fasthttp.RequestHandler {
	return forward.Receive(s.adminRoutes(true))
}

// NewFramedServer returns the server of framed forwarded requests: the
// public routes, as the node's forwarded public listener serves them.
func (s *Server) NewFramedServer() *forward.FramedServer {
	return forward.NewFramedServer(forward.FramedConfig{
		Handler: s.newEdge().RefuseBadHeads(s.ForwardedPublicHandler()),
		Logger:  edge.NewLogger(s.log, "addrwatch-frames"),
		BodyMax: bodyBytesMax,
		ReadError: func(ctx *fasthttp.RequestCtx, err error) error {
			return edge.ReadError(ctx, err, bodyBytesMax)
		},
		WriteError: writeError,
	})
}
