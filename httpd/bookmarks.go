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

func (s *Server) registerBookmarks(r routeAdder, prefix string, aud audience) {
	cards := prefix + "/bookmark-spaces/{space_id}/cards"
	r.GET(cards, func(ctx *fasthttp.RequestCtx) {
		s.read(ctx, aud, actors.ListBookmarksQuery{SpaceID: pathParam(ctx, "space_id")})
	})
	r.POST(cards, func(ctx *fasthttp.RequestCtx) {
		s.write(ctx, aud, writeSpec{idempotent: true, payload: func(ctx *fasthttp.RequestCtx, _ string) (actors.Payload, error) {
			return decodeBookmarkCreate(ctx)
		}})
	})
	onlyMethods(r, cards+"/validate", fasthttp.MethodPost)
	r.POST(cards+"/validate", func(ctx *fasthttp.RequestCtx) {
		s.readWith(ctx, aud, func() (actors.Query, error) {
			p, err := decodeBookmarkCreate(ctx)
			if err != nil {
				return nil, err
			}
			return actors.ValidateBookmarkQuery{Card: *p}, nil
		})
	})
	r.GET(cards+"/{card_id}", func(ctx *fasthttp.RequestCtx) {
		s.read(ctx, aud, actors.GetBookmarkQuery{SpaceID: pathParam(ctx, "space_id"), CardID: pathParam(ctx, "card_id")})
	})
	r.PATCH(cards+"/{card_id}", func(ctx *fasthttp.RequestCtx) {
		s.write(ctx, aud, writeSpec{payload: func(ctx *fasthttp.RequestCtx, _ string) (actors.Payload, error) {
			version, fields, err := cardPatch(ctx)
			if err != nil {
				return nil, err
			}
			return &actors.UpdateBookmarkCard{SpaceID: pathParam(ctx, "space_id"), CardID: pathParam(ctx, "card_id"),
				ExpectedVersion: version, CardFields: fields}, nil
		}})
	})
	r.DELETE(cards+"/{card_id}", func(ctx *fasthttp.RequestCtx) {
		s.write(ctx, aud, writeSpec{idempotent: true, payload: func(ctx *fasthttp.RequestCtx, _ string) (actors.Payload, error) {
			version, err := cardDelete(ctx)
			if err != nil {
				return nil, err
			}
			return &actors.DeleteBookmarkCard{SpaceID: pathParam(ctx, "space_id"), CardID: pathParam(ctx, "card_id"), ExpectedVersion: version}, nil
		}})
	})
}
