package httpd

import (
	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/actors"
)

// Bookmark card routes, shared by the agent API and the owner API.

// bookmarkCreateRequest is the body of a bookmark create and its validate.
type bookmarkCreateRequest struct {
	ExpectedSpaceVersion *string `json:"expected_space_version"`
	Address              *string `json:"address"`
	CoinID               *string `json:"coin_id"`
	Name                 *string `json:"name"`
	Note                 *string `json:"note"`
	ColorKey             *string `json:"color_key"`
}

func decodeBookmarkCreate(ctx *fasthttp.RequestCtx) (*actors.CreateBookmarkCard, error) {
	var req bookmarkCreateRequest
	if err := decodeBody(ctx, &req, cardBodyBytesMax); err != nil {
		return nil, err
	}
	switch {
	case req.ExpectedSpaceVersion == nil:
		return nil, required("expected_space_version")
	case req.Address == nil:
		return nil, required("address")
	}
	return &actors.CreateBookmarkCard{
		CardID:               newID(),
		SpaceID:              pathParam(ctx, "space_id"),
		ExpectedSpaceVersion: *req.ExpectedSpaceVersion,
		Address:              *req.Address,
		CoinID:               req.CoinID,
		CardFields:           actors.CardFields{Name: req.Name, Note: req.Note, ColorKey: req.ColorKey},
	}, nil
}

func (s *Server) registerBookmarks(api routes, prefix string) {
	cards := prefix + "/bookmark-spaces/{space_id}/cards"
	api.get(cards, func(r *request) error {
		return s.read(r, actors.ListBookmarksQuery{SpaceID: pathParam(r.ctx, "space_id")})
	})
	api.post(cards, func(r *request) error {
		return s.write(r, writeSpec{idempotent: true, payload: func(ctx *fasthttp.RequestCtx, _ string) (actors.Payload, error) {
			return decodeBookmarkCreate(ctx)
		}})
	})
	onlyMethods(api.add, cards+"/validate", fasthttp.MethodPost)
	api.post(cards+"/validate", func(r *request) error {
		return s.readWith(r, func() (actors.Query, error) {
			p, err := decodeBookmarkCreate(r.ctx)
			if err != nil {
				return nil, err
			}
			return actors.ValidateBookmarkQuery{Card: *p}, nil
		})
	})
	api.get(cards+"/{card_id}", func(r *request) error {
		return s.read(r, actors.GetBookmarkQuery{SpaceID: pathParam(r.ctx, "space_id"), CardID: pathParam(r.ctx, "card_id")})
	})
	api.patch(cards+"/{card_id}", func(r *request) error {
		return s.write(r, writeSpec{payload: func(ctx *fasthttp.RequestCtx, _ string) (actors.Payload, error) {
			version, fields, err := cardPatch(ctx)
			if err != nil {
				return nil, err
			}
			return &actors.UpdateBookmarkCard{SpaceID: pathParam(ctx, "space_id"), CardID: pathParam(ctx, "card_id"),
				ExpectedVersion: version, CardFields: fields}, nil
		}})
	})
	api.delete(cards+"/{card_id}", func(r *request) error {
		return s.write(r, writeSpec{idempotent: true, payload: func(ctx *fasthttp.RequestCtx, _ string) (actors.Payload, error) {
			version, err := cardDelete(ctx)
			if err != nil {
				return nil, err
			}
			return &actors.DeleteBookmarkCard{SpaceID: pathParam(ctx, "space_id"), CardID: pathParam(ctx, "card_id"), ExpectedVersion: version}, nil
		}})
	})
}
