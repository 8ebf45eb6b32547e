package httpd

import (
	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/actors"
)

// Space routes, shared by the agent API and the owner API.

type spaceCreateRequest struct {
	ExpectedBookmarkRevision *string `json:"expected_bookmark_revision"`
	Name                     *string `json:"name"`
	Type                     *string `json:"type"`
}

// spacePatchRequest renames a Space; type is honoured for the owner only.
type spacePatchRequest struct {
	ExpectedBookmarkRevision *string `json:"expected_bookmark_revision"`
	Name                     *string `json:"name"`
	Type                     *string `json:"type"`
}

type spaceDeleteRequest struct {
	ExpectedBookmarkRevision *string `json:"expected_bookmark_revision"`
	ExpectedVersion          *string `json:"expected_version"`
	ConfirmDeleteCards       *bool   `json:"confirm_delete_cards"`
}

var spaceOperations = []operation{
	{id: "listSpaces", method: fasthttp.MethodGet, path: "/bookmark-spaces", apis: bothAPIs,
		response: answerOf(actors.ListSpacesQuery{}), status: fasthttp.StatusOK,
		serve: func(s *Server, r *request) error {
			return s.read(r, actors.ListSpacesQuery{})
		}},
	{id: "createSpace", method: fasthttp.MethodPost, path: "/bookmark-spaces", apis: bothAPIs, idempotent: true,
		request: typeOf[spaceCreateRequest](), response: typeOf[actors.SpaceEnvelope](), status: fasthttp.StatusCreated,
		serve: func(s *Server, r *request) error {
			return s.write(r, writeSpec{payload: func(ctx *fasthttp.RequestCtx, _ string) (actors.Payload, error) {
				var req spaceCreateRequest
				if err := decodeBody(ctx, &req, cardBodyBytesMax); err != nil {
					return nil, err
				}
				switch {
				case req.ExpectedBookmarkRevision == nil:
					return nil, required("expected_bookmark_revision")
				case req.Name == nil:
					return nil, required("name")
				case req.Type == nil:
					return nil, required("type")
				}
				return &actors.CreateSpace{SpaceID: newID(), ExpectedBookmarkRevision: *req.ExpectedBookmarkRevision, Name: *req.Name, Type: actors.SpaceType(*req.Type)}, nil
			}})
		}},
	{id: "getSpace", method: fasthttp.MethodGet, path: "/bookmark-spaces/{space_id}", apis: bothAPIs,
		response: answerOf(actors.GetSpaceQuery{}), status: fasthttp.StatusOK,
		serve: func(s *Server, r *request) error {
			return s.read(r, actors.GetSpaceQuery{SpaceID: pathParam(r.ctx, "space_id")})
		}},
	{id: "updateSpace", method: fasthttp.MethodPatch, path: "/bookmark-spaces/{space_id}", apis: bothAPIs,
		request: typeOf[spacePatchRequest](), response: typeOf[actors.SpaceEnvelope](), status: fasthttp.StatusOK,
		serve: func(s *Server, r *request) error {
			return s.write(r, writeSpec{payload: func(ctx *fasthttp.RequestCtx, _ string) (actors.Payload, error) {
				var req spacePatchRequest
				if err := decodeBody(ctx, &req, cardBodyBytesMax); err != nil {
					return nil, err
				}
				if req.ExpectedBookmarkRevision == nil {
					return nil, required("expected_bookmark_revision")
				}
				p := &actors.UpdateSpace{SpaceID: pathParam(ctx, "space_id"), ExpectedBookmarkRevision: *req.ExpectedBookmarkRevision, Name: req.Name}
				if req.Type != nil {
					t := actors.SpaceType(*req.Type)
					p.Type = &t
				}
				return p, nil
			}})
		}},
	{id: "deleteSpace", method: fasthttp.MethodDelete, path: "/bookmark-spaces/{space_id}", apis: bothAPIs, idempotent: true,
		request: typeOf[spaceDeleteRequest](), response: typeOf[actors.SpaceDeletedView](), status: fasthttp.StatusOK,
		serve: func(s *Server, r *request) error {
			return s.write(r, writeSpec{payload: func(ctx *fasthttp.RequestCtx, _ string) (actors.Payload, error) {
				var req spaceDeleteRequest
				if err := decodeBody(ctx, &req, cardBodyBytesMax); err != nil {
					return nil, err
				}
				switch {
				case req.ExpectedBookmarkRevision == nil:
					return nil, required("expected_bookmark_revision")
				case req.ExpectedVersion == nil:
					return nil, required("expected_version")
				case req.ConfirmDeleteCards == nil:
					return nil, required("confirm_delete_cards")
				}
				return &actors.DeleteSpace{SpaceID: pathParam(ctx, "space_id"), ExpectedBookmarkRevision: *req.ExpectedBookmarkRevision,
					ExpectedVersion: *req.ExpectedVersion, ConfirmDeleteCards: *req.ConfirmDeleteCards}, nil
			}})
		}},
}
