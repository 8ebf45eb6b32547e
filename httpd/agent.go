package httpd

import (
	"github.com/addrwatch/addrwatch/actors"
)

// agentPrefix is the base path of the Agent API.
const agentPrefix = "/v1"

func (s *Server) registerAgent(r routeAdder) {
	api := routes{add: r, s: s, aud: audienceAgent}
	api.get(agentPrefix+"/me", func(r *request) error {
		return s.read(r, actors.MeQuery{})
	})
	s.registerResources(api, agentPrefix)
	s.registerDocs(r)
	s.registerOpenAPI(r)
}
