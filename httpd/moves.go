package httpd

import (
	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/actors"
)

// moveRequest is the body of POST /cards/move and its validate.
type moveRequest struct {
	SourceKind                 *string `json:"source_kind"`
	SourceID                   *string `json:"source_id"`
	SourceSpaceID              *string `json:"source_space_id"`
	DestinationKind            *string `json:"destination_kind"`
	DestinationSpaceID         *string `json:"destination_space_id"`
	ExpectedSourceVersion      *string `json:"expected_source_version"`
	ExpectedDestinationVersion *string `json:"expected_destination_version"`
}

func decodeMove(ctx *fasthttp.RequestCtx) (*actors.MoveCard, error) {
	var req moveRequest
	if err := decodeBody(ctx, &req, cardBodyBytesMax); err != nil {
		return nil, err
	}
	switch {
	case req.SourceKind == nil:
		return nil, required("source_kind")
	case req.SourceID == nil:
		return nil, required("source_id")
	case req.DestinationKind == nil:
		return nil, required("destination_kind")
	case req.ExpectedSourceVersion == nil:
		return nil, required("expected_source_version")
	}
	return &actors.MoveCard{
		NewCardID:                  newID(),
		SourceKind:                 actors.CardLocationKind(*req.SourceKind),
		SourceID:                   *req.SourceID,
		SourceSpaceID:              deref(req.SourceSpaceID),
		DestinationKind:            actors.CardLocationKind(*req.DestinationKind),
		DestinationSpaceID:         deref(req.DestinationSpaceID),
		ExpectedSourceVersion:      *req.ExpectedSourceVersion,
		ExpectedDestinationVersion: req.ExpectedDestinationVersion,
	}, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

var moveOperations = []operation{
	{id: "moveCard", method: fasthttp.MethodPost, path: "/cards/move", apis: bothAPIs, idempotent: true,
		request: typeOf[moveRequest](), response: typeOf[actors.MoveView](), status: fasthttp.StatusOK,
		serve: func(s *Server, r *request) error {
			return s.write(r, writeSpec{payload: func(ctx *fasthttp.RequestCtx, _ string) (actors.Payload, error) {
				return decodeMove(ctx)
			}})
		}},
	{id: "validateMove", method: fasthttp.MethodPost, path: "/cards/move/validate", apis: bothAPIs,
		request: typeOf[moveRequest](), response: answerOf(actors.ValidateMoveQuery{}), status: fasthttp.StatusOK,
		serve: func(s *Server, r *request) error {
			return s.readWith(r, func() (actors.Query, error) {
				p, err := decodeMove(r.ctx)
				if err != nil {
					return nil, err
				}
				return actors.ValidateMoveQuery{Move: *p}, nil
			})
		}},
}
