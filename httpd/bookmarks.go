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

// bookmarkCards is the path of a Space's cards.
const bookmarkCards = "/bookmark-spaces/{space_id}/cards"

var bookmarkOperations = []operation{
	{id: "listBookmarkCards", method: fasthttp.MethodGet, path: bookmarkCards, apis: bothAPIs,
		response: answerOf(actors.ListBookmarksQuery{}), status: fasthttp.StatusOK,
		serve: func(s *Server, r *request) error {
			return s.read(r, actors.ListBookmarksQuery{SpaceID: pathParam(r.ctx, "space_id")})
		}},
	{id: "createBookmarkCard", method: fasthttp.MethodPost, path: bookmarkCards, apis: bothAPIs, idempotent: true,
		request: typeOf[bookmarkCreateRequest](), response: typeOf[actors.BookmarkEnvelope](), status: fasthttp.StatusCreated,
		serve: func(s *Server, r *request) error {
			return s.write(r, writeSpec{payload: func(ctx *fasthttp.RequestCtx, _ string) (actors.Payload, error) {
				return decodeBookmarkCreate(ctx)
			}})
		}},
	{id: "validateBookmarkCard", method: fasthttp.MethodPost, path: bookmarkCards + "/validate", apis: bothAPIs, pinned: true,
		request: typeOf[bookmarkCreateRequest](), response: answerOf(actors.ValidateBookmarkQuery{}), status: fasthttp.StatusOK,
		serve: func(s *Server, r *request) error {
			return s.readWith(r, func() (actors.Query, error) {
				p, err := decodeBookmarkCreate(r.ctx)
				if err != nil {
					return nil, err
				}
				return actors.ValidateBookmarkQuery{Card: *p}, nil
			})
		}},
	{id: "getBookmarkCard", method: fasthttp.MethodGet, path: bookmarkCards + "/{card_id}", apis: bothAPIs,
		response: answerOf(actors.GetBookmarkQuery{}), status: fasthttp.StatusOK,
		serve: func(s *Server, r *request) error {
			return s.read(r, actors.GetBookmarkQuery{SpaceID: pathParam(r.ctx, "space_id"), CardID: pathParam(r.ctx, "card_id")})
		}},
	{id: "updateBookmarkCard", method: fasthttp.MethodPatch, path: bookmarkCards + "/{card_id}", apis: bothAPIs,
		request: typeOf[cardPatchRequest](), response: typeOf[actors.BookmarkEnvelope](), status: fasthttp.StatusOK,
		serve: func(s *Server, r *request) error {
			return s.write(r, writeSpec{payload: func(ctx *fasthttp.RequestCtx, _ string) (actors.Payload, error) {
				version, fields, err := cardPatch(ctx)
				if err != nil {
					return nil, err
				}
				return &actors.UpdateBookmarkCard{SpaceID: pathParam(ctx, "space_id"), CardID: pathParam(ctx, "card_id"),
					ExpectedVersion: version, CardFields: fields}, nil
			}})
		}},
	{id: "deleteBookmarkCard", method: fasthttp.MethodDelete, path: bookmarkCards + "/{card_id}", apis: bothAPIs, idempotent: true,
		request: typeOf[cardDeleteRequest](), response: typeOf[actors.DeletedView](), status: fasthttp.StatusOK,
		serve: func(s *Server, r *request) error {
			return s.write(r, writeSpec{payload: func(ctx *fasthttp.RequestCtx, _ string) (actors.Payload, error) {
				version, err := cardDelete(ctx)
				if err != nil {
					return nil, err
				}
				return &actors.DeleteBookmarkCard{SpaceID: pathParam(ctx, "space_id"), CardID: pathParam(ctx, "card_id"), ExpectedVersion: version}, nil
			}})
		}},
}
