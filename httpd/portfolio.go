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

func (r cardCreateRequest) payload() (*actors.CreatePortfolioCard, *actors.Error) {
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

func (s *Server) registerPortfolio(r routeAdder, prefix string, aud audience) {
	r.GET(prefix+"/portfolio/cards", func(ctx *fasthttp.RequestCtx) {
		s.read(ctx, aud, actors.ListPortfolioQuery{})
	})
	r.POST(prefix+"/portfolio/cards", func(ctx *fasthttp.RequestCtx) {
		s.write(ctx, aud, writeSpec{idempotent: true, payload: func(ctx *fasthttp.RequestCtx, _ string) (actors.Payload, *actors.Error) {
			var req cardCreateRequest
			if err := decodeBody(ctx, &req, cardBodyBytesMax); err != nil {
				return nil, err
			}
			return req.payload()
		}})
	})
	r.POST(prefix+"/portfolio/cards/validate", func(ctx *fasthttp.RequestCtx) {
		s.readWith(ctx, aud, func() (actors.Query, *actors.Error) {
			var req cardCreateRequest
			if err := decodeBody(ctx, &req, cardBodyBytesMax); err != nil {
				return nil, err
			}
			p, err := req.payload()
			if err != nil {
				return nil, err
			}
			return actors.ValidateCreatePortfolioCardQuery{Card: *p}, nil
		})
	})
	onlyMethods(r, prefix+"/portfolio/cards/validate", fasthttp.MethodPost)
	r.GET(prefix+"/portfolio/cards/{card_id}", func(ctx *fasthttp.RequestCtx) {
		s.read(ctx, aud, actors.GetPortfolioCardQuery{CardID: pathParam(ctx, "card_id")})
	})
	r.PATCH(prefix+"/portfolio/cards/{card_id}", func(ctx *fasthttp.RequestCtx) {
		s.write(ctx, aud, writeSpec{payload: func(ctx *fasthttp.RequestCtx, _ string) (actors.Payload, *actors.Error) {
			var req cardPatchRequest
			if err := decodeBody(ctx, &req, cardBodyBytesMax); err != nil {
				return nil, err
			}
			if req.ExpectedVersion == nil {
				return nil, required("expected_version")
			}
			if err := req.fields().RequireChange(); err != nil {
				return nil, err
			}
			return &actors.UpdatePortfolioCard{
				CardID:          pathParam(ctx, "card_id"),
				ExpectedVersion: *req.ExpectedVersion,
				CardFields:      req.fields(),
			}, nil
		}})
	})
	r.DELETE(prefix+"/portfolio/cards/{card_id}", func(ctx *fasthttp.RequestCtx) {
		s.write(ctx, aud, writeSpec{idempotent: true, payload: func(ctx *fasthttp.RequestCtx, _ string) (actors.Payload, *actors.Error) {
			var req cardDeleteRequest
			if err := decodeBody(ctx, &req, cardBodyBytesMax); err != nil {
				return nil, err
			}
			if req.ExpectedVersion == nil {
				return nil, required("expected_version")
			}
			return &actors.DeletePortfolioCard{CardID: pathParam(ctx, "card_id"), ExpectedVersion: *req.ExpectedVersion}, nil
		}})
	})
}
