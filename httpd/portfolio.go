package httpd

import (
	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/actors"
)

// Account card routes, shared by the agent API and the owner API: the
// same paths and bodies, with the caller's own principal.

// cardCreateRequest is the body of POST /portfolio/cards and its validate.
type cardCreateRequest struct {
	Address  *string `json:"address"`
	Name     *string `json:"name"`
	Note     *string `json:"note"`
	ColorKey *string `json:"color_key"`
}

func (r cardCreateRequest) payload() (*actors.CreatePortfolioCard, error) {
	if r.Address == nil {
		return nil, required("address")
	}
	return &actors.CreatePortfolioCard{
		CardID:     newID(),
		Address:    *r.Address,
		CardFields: actors.CardFields{Name: r.Name, Note: r.Note, ColorKey: r.ColorKey},
	}, nil
}

// cardPatchRequest is the body of PATCH /portfolio/cards/{card_id}.
type cardPatchRequest struct {
	ExpectedVersion *string `json:"expected_version"`
	Name            *string `json:"name"`
	Note            *string `json:"note"`
	ColorKey        *string `json:"color_key"`
}

func (r cardPatchRequest) fields() actors.CardFields {
	return actors.CardFields{Name: r.Name, Note: r.Note, ColorKey: r.ColorKey}
}

// cardDeleteRequest is the body of DELETE /portfolio/cards/{card_id}.
type cardDeleteRequest struct {
	ExpectedVersion *string `json:"expected_version"`
}

// cardPatch decodes the body of a card PATCH, Account or bookmark: the
// card's version and at least one field to change.
func cardPatch(ctx *fasthttp.RequestCtx) (version string, fields actors.CardFields, err error) {
	var req cardPatchRequest
	if err := decodeBody(ctx, &req, cardBodyBytesMax); err != nil {
		return "", fields, err
	}
	if req.ExpectedVersion == nil {
		return "", fields, required("expected_version")
	}
	fields = req.fields()
	if err := fields.RequireChange(); err != nil {
		return "", fields, err
	}
	return *req.ExpectedVersion, fields, nil
}

// cardDelete decodes the body of a card DELETE, Account or bookmark: the
// card's version.
func cardDelete(ctx *fasthttp.RequestCtx) (version string, err error) {
	var req cardDeleteRequest
	if err := decodeBody(ctx, &req, cardBodyBytesMax); err != nil {
		return "", err
	}
	if req.ExpectedVersion == nil {
		return "", required("expected_version")
	}
	return *req.ExpectedVersion, nil
}

var portfolioOperations = []operation{
	{id: "listPortfolioCards", method: fasthttp.MethodGet, path: "/portfolio/cards", apis: bothAPIs,
		response: answerOf(actors.ListPortfolioQuery{}), status: fasthttp.StatusOK,
		serve: func(s *Server, r *request) error {
			return s.read(r, actors.ListPortfolioQuery{})
		}},
	{id: "createPortfolioCard", method: fasthttp.MethodPost, path: "/portfolio/cards", apis: bothAPIs, idempotent: true,
		request: typeOf[cardCreateRequest](), response: typeOf[actors.CardEnvelope](), status: fasthttp.StatusCreated,
		serve: func(s *Server, r *request) error {
			return s.write(r, writeSpec{payload: func(ctx *fasthttp.RequestCtx, _ string) (actors.Payload, error) {
				var req cardCreateRequest
				if err := decodeBody(ctx, &req, cardBodyBytesMax); err != nil {
					return nil, err
				}
				return req.payload()
			}})
		}},
	{id: "validatePortfolioCard", method: fasthttp.MethodPost, path: "/portfolio/cards/validate", apis: bothAPIs, pinned: true,
		request: typeOf[cardCreateRequest](), response: answerOf(actors.ValidateCreatePortfolioCardQuery{}), status: fasthttp.StatusOK,
		serve: func(s *Server, r *request) error {
			return s.readWith(r, func() (actors.Query, error) {
				var req cardCreateRequest
				if err := decodeBody(r.ctx, &req, cardBodyBytesMax); err != nil {
					return nil, err
				}
				p, err := req.payload()
				if err != nil {
					return nil, err
				}
				return actors.ValidateCreatePortfolioCardQuery{Card: *p}, nil
			})
		}},
	{id: "getPortfolioCard", method: fasthttp.MethodGet, path: "/portfolio/cards/{card_id}", apis: bothAPIs,
		response: answerOf(actors.GetPortfolioCardQuery{}), status: fasthttp.StatusOK,
		serve: func(s *Server, r *request) error {
			return s.read(r, actors.GetPortfolioCardQuery{CardID: pathParam(r.ctx, "card_id")})
		}},
	{id: "updatePortfolioCard", method: fasthttp.MethodPatch, path: "/portfolio/cards/{card_id}", apis: bothAPIs,
		request: typeOf[cardPatchRequest](), response: typeOf[actors.CardEnvelope](), status: fasthttp.StatusOK,
		serve: func(s *Server, r *request) error {
			return s.write(r, writeSpec{payload: func(ctx *fasthttp.RequestCtx, _ string) (actors.Payload, error) {
				version, fields, err := cardPatch(ctx)
				if err != nil {
					return nil, err
				}
				return &actors.UpdatePortfolioCard{CardID: pathParam(ctx, "card_id"), ExpectedVersion: version, CardFields: fields}, nil
			}})
		}},
	{id: "deletePortfolioCard", method: fasthttp.MethodDelete, path: "/portfolio/cards/{card_id}", apis: bothAPIs, idempotent: true,
		request: typeOf[cardDeleteRequest](), response: typeOf[actors.DeletedView](), status: fasthttp.StatusOK,
		serve: func(s *Server, r *request) error {
			return s.write(r, writeSpec{payload: func(ctx *fasthttp.RequestCtx, _ string) (actors.Payload, error) {
				version, err := cardDelete(ctx)
				if err != nil {
					return nil, err
				}
				return &actors.DeletePortfolioCard{CardID: pathParam(ctx, "card_id"), ExpectedVersion: version}, nil
			}})
		}},
}
