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

func (s *Server) registerPortfolio(r routeAdder, prefix string, aud audience) {
	r.GET(prefix+"/portfolio/cards", func(ctx *fasthttp.RequestCtx) {
		s.read(ctx, aud, actors.ListPortfolioQuery{})
	})
	r.POST(prefix+"/portfolio/cards", func(ctx *fasthttp.RequestCtx) {
		s.write(ctx, aud, writeSpec{idempotent: true, payload: func(ctx *fasthttp.RequestCtx, _ string) (actors.Payload, error) {
			var req cardCreateRequest
			if err := decodeBody(ctx, &req, cardBodyBytesMax); err != nil {
				return nil, err
			}
			return req.payload()
		}})
	})
	r.POST(prefix+"/portfolio/cards/validate", func(ctx *fasthttp.RequestCtx) {
		s.readWith(ctx, aud, func() (actors.Query, error) {
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
		s.write(ctx, aud, writeSpec{payload: func(ctx *fasthttp.RequestCtx, _ string) (actors.Payload, error) {
			version, fields, err := cardPatch(ctx)
			if err != nil {
				return nil, err
			}
			return &actors.UpdatePortfolioCard{CardID: pathParam(ctx, "card_id"), ExpectedVersion: version, CardFields: fields}, nil
		}})
	})
	r.DELETE(prefix+"/portfolio/cards/{card_id}", func(ctx *fasthttp.RequestCtx) {
		s.write(ctx, aud, writeSpec{idempotent: true, payload: func(ctx *fasthttp.RequestCtx, _ string) (actors.Payload, error) {
			version, err := cardDelete(ctx)
			if err != nil {
				return nil, err
			}
			return &actors.DeletePortfolioCard{CardID: pathParam(ctx, "card_id"), ExpectedVersion: version}, nil
		}})
	})
}
