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

func (s *Server) registerSpaces(r routeAdder, prefix string, aud audience) {
	r.GET(prefix+"/bookmark-spaces", func(ctx *fasthttp.RequestCtx) {
		s.read(ctx, aud, actors.ListSpacesQuery{})
	})
	r.POST(prefix+"/bookmark-spaces", func(ctx *fasthttp.RequestCtx) {
		s.write(ctx, aud, writeSpec{idempotent: true, payload: func(ctx *fasthttp.RequestCtx, _ string) (actors.Payload, error) {
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
	})
	r.GET(prefix+"/bookmark-spaces/{space_id}", func(ctx *fasthttp.RequestCtx) {
		s.read(ctx, aud, actors.GetSpaceQuery{SpaceID: pathParam(ctx, "space_id")})
	})
	r.PATCH(prefix+"/bookmark-spaces/{space_id}", func(ctx *fasthttp.RequestCtx) {
		s.write(ctx, aud, writeSpec{payload: func(ctx *fasthttp.RequestCtx, _ string) (actors.Payload, error) {
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
	})
	r.DELETE(prefix+"/bookmark-spaces/{space_id}", func(ctx *fasthttp.RequestCtx) {
		s.write(ctx, aud, writeSpec{idempotent: true, payload: func(ctx *fasthttp.RequestCtx, _ string) (actors.Payload, error) {
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
	})
}
