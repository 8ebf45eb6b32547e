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

func (s *Server) registerPortfolio(api routes, prefix string) {
	api.get(prefix+"/portfolio/cards", func(r *request) error {
		return s.read(r, actors.ListPortfolioQuery{})
	})
	api.post(prefix+"/portfolio/cards", func(r *request) error {
		return s.write(r, writeSpec{idempotent: true, payload: func(ctx *fasthttp.RequestCtx, _ string) (actors.Payload, error) {
			var req cardCreateRequest
			if err := decodeBody(ctx, &req, cardBodyBytesMax); err != nil {
				return nil, err
			}
			return req.payload()
		}})
	})
	api.post(prefix+"/portfolio/cards/validate", func(r *request) error {
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
	})
	onlyMethods(api.add, prefix+"/portfolio/cards/validate", fasthttp.MethodPost)
	api.get(prefix+"/portfolio/cards/{card_id}", func(r *request) error {
		return s.read(r, actors.GetPortfolioCardQuery{CardID: pathParam(r.ctx, "card_id")})
	})
	api.patch(prefix+"/portfolio/cards/{card_id}", func(r *request) error {
		return s.write(r, writeSpec{payload: func(ctx *fasthttp.RequestCtx, _ string) (actors.Payload, error) {
			version, fields, err := cardPatch(ctx)
			if err != nil {
				return nil, err
			}
			return &actors.UpdatePortfolioCard{CardID: pathParam(ctx, "card_id"), ExpectedVersion: version, CardFields: fields}, nil
		}})
	})
	api.delete(prefix+"/portfolio/cards/{card_id}", func(r *request) error {
		return s.write(r, writeSpec{idempotent: true, payload: func(ctx *fasthttp.RequestCtx, _ string) (actors.Payload, error) {
			version, err := cardDelete(ctx)
			if err != nil {
				return nil, err
			}
			return &actors.DeletePortfolioCard{CardID: pathParam(ctx, "card_id"), ExpectedVersion: version}, nil
		}})
	})
}
