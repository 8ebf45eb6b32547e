package httpd

import (
	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/actors"
)

// agentPrefix is the base path of the Agent API.
const agentPrefix = "/v1"

func (s *Server) registerAgent(r routeAdder) {
	s.registerOperations(routes{add: r, s: s, aud: audienceAgent}, r)
}

// agentOperations are the agent API's own.
var agentOperations = []operation{
	{id: "getMe", method: fasthttp.MethodGet, path: "/me", apis: agentAPI, response: answerOf(actors.MeQuery{}), status: fasthttp.StatusOK,
		serve: func(s *Server, r *request) error { return s.read(r, actors.MeQuery{}) }},
}
