package httpd

import (
	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/actors"
)

// Space routes, shared by the agent API and the owner API.
func (s *Server) registerSpaces(r routeAdder, prefix string, aud audience) {
	r.GET(prefix+"/bookmark-spaces", func(ctx *fasthttp.RequestCtx) {
		s.read(ctx, aud, actors.ListSpacesQuery{})
	})
}
