package httpd

import (
	_ "embed"

	"github.com/valyala/fasthttp"
)

// The machine-readable descriptions of the two public APIs. Like the docs
// they are public: they need no key, and a key sent with them is ignored
// (the spec says clients never send it here).

//go:embed openapi/agent.json
var agentOpenAPI []byte

//go:embed openapi/owner.json
var ownerOpenAPI []byte

func (s *Server) registerOpenAPI(r routeAdder) {
	r.GET(agentPrefix+"/openapi.json", jsonDocument(agentOpenAPI))
	r.GET(ownerPrefix+"/openapi.json", jsonDocument(ownerOpenAPI))
}

// jsonDocument serves a fixed JSON document.
func jsonDocument(doc []byte) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		ctx.Response.Header.SetContentType("application/json")
		ctx.SetBody(doc)
	}
}
