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

// documentOperations are the public documents: the guides of the agent
// API, and each API's OpenAPI document (openapi.go).
var documentOperations = []operation{
	{id: "getDocs", method: fasthttp.MethodGet, path: "/docs", apis: agentAPI, document: true, status: fasthttp.StatusOK,
		serve: document("text/markdown; charset=utf-8", agentGuide)},
	{id: "getSheetGuide", method: fasthttp.MethodGet, path: "/docs/sheets", apis: agentAPI, document: true, status: fasthttp.StatusOK,
		serve: document("text/markdown; charset=utf-8", sheetsGuide)},
	{id: "getOpenAPI", method: fasthttp.MethodGet, path: "/openapi.json", apis: agentAPI, document: true, status: fasthttp.StatusOK,
		serve: document("application/json", agentOpenAPI)},
	{id: "getOpenAPI", method: fasthttp.MethodGet, path: "/openapi.json", apis: ownerAPI, document: true, status: fasthttp.StatusOK,
		serve: document("application/json", ownerOpenAPI)},
}

// document serves a fixed document of the given content type.
func document(contentType string, doc []byte) func(*Server, *request) error {
	return func(_ *Server, r *request) error {
		r.ctx.Response.Header.SetContentType(contentType)
		r.ctx.SetBody(doc)
		return nil
	}
}
