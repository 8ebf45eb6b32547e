package httpd

import (
	"reflect"
	"slices"

	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/actors"
)

// operation is the one declaration of an operation of the agent API
// (/v1) or the owner API (/owner/v1): the router registers it from here
// (registerOperations), and the tests check the OpenAPI documents and the
// MCP tool list against it (operations_test.go), so a route cannot drift
// from its documentation.
type operation struct {
	// id is the operationId of the operation in the documents of the APIs
	// that serve it (openapi/agent.json, openapi/owner.json).
	id string
	// method and path: the path below the API's prefix, in the router's
	// {param} form.
	method, path string
	// apis are the APIs that serve it: the agent's, the owner's or both
	// (the account's resources are the same paths, bodies and shapes on
	// both, with the caller's own principal).
	apis apis
	// idempotent operations honour the Idempotency-Key header (write).
	idempotent bool
	// request is the Go type the JSON request body decodes into; nil for
	// an operation without a JSON body.
	request reflect.Type
	// response is the Go type of the success body: for a read the query's
	// answer (answerOf), for a write the view its rule answers with; nil
	// for no JSON body (204, or a file).
	response reflect.Type
	// status is the success status.
	status int
	// sheet puts the Sheet ceiling in front of serve on the agent API
	// (sheetCeilingGate); its rules take the Sheet-write budget
	// (sheetWriteRules).
	sheet bool
	// pinned pins the methods of a static path that shares its place in
	// the router's tree with a parameter route (onlyMethods).
	pinned bool
	// document is a public fixed document: served as it is, outside the
	// request path (no credential, no activity, no owner back-off).
	document bool
	// serve answers the request; the error it returns is written by the
	// route (request.fail).
	serve func(s *Server, r *request) error
}

// apis is a set of the public APIs.
type apis uint8

const (
	agentAPI apis = 1 << iota
	ownerAPI
	bothAPIs = agentAPI | ownerAPI
)

// servedOn reports whether the API of aud serves op.
func (op operation) servedOn(aud audience) bool {
	switch aud {
	case audienceAgent:
		return op.apis&agentAPI != 0
	case audienceOwner:
		return op.apis&ownerAPI != 0
	}
	return false
}

// prefixOf is the base path of the API of aud.
func prefixOf(aud audience) string {
	if aud == audienceOwner {
		return ownerPrefix
	}
	return agentPrefix
}

// operations are every operation of the two public APIs, one table per
// resource.
var operations = slices.Concat(
	agentOperations, ownerOperations, loginOperations, explorerOperations,
	portfolioOperations, spaceOperations, bookmarkOperations, sheetOperations,
	moveOperations, historyOperations, historyCSVOperations, eventOperations, chainActivityOperations,
	labelOperations, activityOperations, notificationOperations, notificationSendOperations, documentOperations,
)

// registerOperations registers every operation the API of api serves.
// A fixed document is registered on public, outside the API's own adder
// (the owner API's adds the credential back-off).
func (s *Server) registerOperations(api routes, public routeAdder) {
	prefix := prefixOf(api.aud)
	for _, op := range operations {
		if !op.servedOn(api.aud) {
			continue
		}
		path := prefix + op.path
		if op.document {
			public.Handle(op.method, path, func(ctx *fasthttp.RequestCtx) {
				_ = op.serve(s, &request{ctx: ctx, aud: api.aud})
			})
			continue
		}
		api.handle(op, path)
		if op.pinned {
			onlyMethods(api.pinned(), path, op.method)
		}
	}
}

// typeOf is the reflect.Type of T, for a declaration's request and
// response.
func typeOf[T any]() reflect.Type { return reflect.TypeFor[T]() }

// answerOf is the type of q's answer: the success body of a read that
// answers with q.
func answerOf[T any](actors.QueryOf[T]) reflect.Type { return reflect.TypeFor[T]() }
