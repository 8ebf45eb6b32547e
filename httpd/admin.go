package httpd

import (
	"crypto/subtle"

	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/actors"
)

// adminPrefix is the base path of the operator API.
const adminPrefix = "/admin/v1"

func (s *Server) registerAdmin(r routeAdder) {
	r.POST(adminPrefix+"/accounts", s.admin(s.createAccount))
	r.GET(adminPrefix+"/cluster", s.admin(func(ctx *fasthttp.RequestCtx) {
		status, err := s.op.Status()
		if err != nil {
			writeError(ctx, storeError(err))
			return
		}
		writeJSON(ctx, fasthttp.StatusOK, status)
	}))
	r.POST(adminPrefix+"/cluster/nodes", s.admin(func(ctx *fasthttp.RequestCtx) {
		var req struct {
			ID       *string `json:"id"`
			RaftAddr *string `json:"raft_addr"`
		}
		if err := decodeBody(ctx, &req, ownerBodyBytesMax); err != nil {
			writeError(ctx, err)
			return
		}
		if req.ID == nil || *req.ID == "" {
			writeError(ctx, required("id"))
			return
		}
		if req.RaftAddr == nil || *req.RaftAddr == "" {
			writeError(ctx, required("raft_addr"))
			return
		}
		if err := s.op.AddVoter(*req.ID, *req.RaftAddr); err != nil {
			writeError(ctx, storeError(err))
			return
		}
		writeJSON(ctx, fasthttp.StatusOK, map[string]string{"id": *req.ID, "raft_addr": *req.RaftAddr})
	}))
	r.DELETE(adminPrefix+"/cluster/nodes/{id}", s.admin(func(ctx *fasthttp.RequestCtx) {
		if err := s.op.RemoveServer(pathParam(ctx, "id")); err != nil {
			writeError(ctx, storeError(err))
			return
		}
		ctx.SetStatusCode(fasthttp.StatusNoContent)
	}))
	r.POST(adminPrefix+"/snapshot", s.admin(func(ctx *fasthttp.RequestCtx) {
		if err := s.op.Snapshot(); err != nil {
			writeError(ctx, storeError(err))
			return
		}
		writeJSON(ctx, fasthttp.StatusOK, map[string]bool{"snapshot_taken": true})
	}))
	r.GET("/healthz", func(ctx *fasthttp.RequestCtx) {
		writeJSON(ctx, fasthttp.StatusOK, map[string]string{"status": "ok"})
	})
	r.GET("/readyz", func(ctx *fasthttp.RequestCtx) {
		if !s.op.Ready() {
			writeError(ctx, actors.Errorf(actors.CodeHTTPError, "not ready: no known leader"))
			return
		}
		writeJSON(ctx, fasthttp.StatusOK, map[string]string{"status": "ready"})
	})
}

// admin wraps a handler with the operator token check.
func (s *Server) admin(h fasthttp.RequestHandler) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		token, found := bearerToken(ctx.Request.Header.Peek(fasthttp.HeaderAuthorization))
		given := hashSecret(token)
		if !found || subtle.ConstantTimeCompare(given[:], s.adminTokenHash[:]) != 1 {
			writeError(ctx, errUnauthorized)
			return
		}
		h(ctx)
	}
}

func (s *Server) createAccount(ctx *fasthttp.RequestCtx) {
	var req struct {
		Plan     *string `json:"plan"`
		Password *string `json:"password"`
	}
	if err := decodeBody(ctx, &req, ownerBodyBytesMax); err != nil {
		writeError(ctx, err)
		return
	}
	if req.Plan == nil {
		writeError(ctx, required("plan"))
		return
	}
	plan, known := actors.ParsePlan(*req.Plan)
	if !known {
		writeError(ctx, actors.Errorf(actors.CodeValidation, "plan must be base or extended"))
		return
	}
	if req.Password == nil {
		writeError(ctx, required("password"))
		return
	}
	c, cancel := s.context()
	defer cancel()
	created, err := s.CreateAccount(c, plan, *req.Password)
	if err != nil {
		writeError(ctx, err)
		return
	}
	writeJSON(ctx, fasthttp.StatusCreated, created)
}
