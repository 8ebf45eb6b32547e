package httpd

import (
	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/actors"
)

// agentPrefix is the base path of the Agent API.
const agentPrefix = "/v1"

func (s *Server) registerAgent(r routeAdder) {
	r.GET(agentPrefix+"/me", func(ctx *fasthttp.RequestCtx) {
		s.read(ctx, audienceAgent, actors.MeQuery{})
	})
	s.registerResources(r, agentPrefix, audienceAgent)
	s.registerDocs(r)
	s.registerOpenAPI(r)
}
