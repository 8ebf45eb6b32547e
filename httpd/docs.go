package httpd

import (
	_ "embed"

	"github.com/valyala/fasthttp"
)

// The Agent API's public documents. They need no key, and a key sent with
// them is ignored.

//go:embed docs/agent.md
var agentGuide []byte

//go:embed docs/sheets.md
var sheetsGuide []byte

func (s *Server) registerDocs(r routeAdder) {
	r.GET(agentPrefix+"/docs", document("text/markdown; charset=utf-8", agentGuide))
	r.GET(agentPrefix+"/docs/sheets", document("text/markdown; charset=utf-8", sheetsGuide))
}

// document serves a fixed document of the given content type.
func document(contentType string, doc []byte) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		ctx.Response.Header.SetContentType(contentType)
		ctx.SetBody(doc)
	}
}
