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
	r.GET(agentPrefix+"/docs", markdown(agentGuide))
	r.GET(agentPrefix+"/docs/sheets", markdown(sheetsGuide))
}

// markdown serves a fixed Markdown document.
func markdown(doc []byte) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		ctx.Response.Header.SetContentType("text/markdown; charset=utf-8")
		ctx.SetBody(doc)
	}
}
