package httpd

import "github.com/valyala/fasthttp"

// metricsGate asks for the operator token on /metrics unless the server
// was started to serve it openly. The figures are not secrets, but they
// show who uses the service how much (request counts by route and status,
// account count, write rates): by default only the operator's monitoring
// reads them. Prometheus sends the token with
// `authorization: {credentials_file: ...}` in its scrape config.
func (s *Server) metricsGate(next fasthttp.RequestHandler) fasthttp.RequestHandler {
	if s.openMetrics {
		return next
	}
	return func(ctx *fasthttp.RequestCtx) {
		if !s.adminTokenValid(ctx) {
			writeError(ctx, errUnauthorized)
			return
		}
		next(ctx)
	}
}
