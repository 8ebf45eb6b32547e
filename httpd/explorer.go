package httpd

import (
	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/actors"
	"github.com/addrwatch/addrwatch/chain"
)

// The block explorer the owner's site links transactions and addresses
// to: GET /owner/v1/explorer says which (none by default) and what may be
// chosen on the account's network; PUT sets it, one of that list, never a
// URL.

var explorerOperations = []operation{
	{id: "getExplorer", method: fasthttp.MethodGet, path: "/explorer", apis: ownerAPI,
		response: answerOf(actors.ExplorerQuery{}), status: fasthttp.StatusOK,
		serve: func(s *Server, r *request) error { return s.read(r, actors.ExplorerQuery{}) }},
	{id: "setExplorer", method: fasthttp.MethodPut, path: "/explorer", apis: ownerAPI,
		request: typeOf[explorerRequest](), response: typeOf[actors.ExplorerView](), status: fasthttp.StatusOK,
		serve: func(s *Server, r *request) error {
			return s.write(r, writeSpec{payload: func(ctx *fasthttp.RequestCtx, _ string) (actors.Payload, error) {
				var req explorerRequest
				if err := decodeBody(ctx, &req, ownerBodyBytesMax); err != nil {
					return nil, err
				}
				if req.Explorer == nil {
					return nil, required("explorer")
				}
				// Mainnet offers every explorer: a name that is none of
				// them is refused here, before the log; the rule checks
				// the account's own network.
				if err := actors.ValidateExplorer(*req.Explorer, chain.Mainnet); err != nil {
					return nil, err
				}
				return &actors.SetExplorer{Explorer: *req.Explorer}, nil
			}})
		}},
}

// explorerRequest is the body of PUT /owner/v1/explorer.
type explorerRequest struct {
	Explorer *string `json:"explorer"`
}
