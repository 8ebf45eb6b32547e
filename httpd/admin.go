package httpd

import (
	"crypto/subtle"
	"strings"

	"github.com/fasthttp/router"
	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/actors"
)

// adminPrefix is the base path of the operator API.
const adminPrefix = "/admin/v1"

func (s *Server) registerAdmin(r routeAdder) {
	r.POST(adminPrefix+"/accounts", handle(s.createAccount))
	r.GET(adminPrefix+"/cluster", handle(func(ctx *fasthttp.RequestCtx) *actors.Error {
		status, err := s.op.Status()
		if err != nil {
			return storeError(err)
		}
		writeJSON(ctx, fasthttp.StatusOK, status)
		return nil
	}))
	r.POST(adminPrefix+"/cluster/nodes", handle(s.addNode))
	r.DELETE(adminPrefix+"/cluster/nodes/{id}", handle(func(ctx *fasthttp.RequestCtx) *actors.Error {
		if err := s.op.RemoveServer(pathParam(ctx, "id")); err != nil {
			return storeError(err)
		}
		ctx.SetStatusCode(fasthttp.StatusNoContent)
		return nil
	}))
	r.POST(adminPrefix+"/snapshot", handle(func(ctx *fasthttp.RequestCtx) *actors.Error {
		if err := s.op.Snapshot(); err != nil {
			return storeError(err)
		}
		writeJSON(ctx, fasthttp.StatusOK, map[string]bool{"snapshot_taken": true})
		return nil
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

// admin adapts an operator handler; adminGate has checked the token.
func (s *Server) admin(h handlerFunc) fasthttp.RequestHandler { return handle(h) }

// adminGate checks the operator token on every admin operation (a route
// and method the router serves, health probes aside) before anything else
// happens to it, forwarding included. OPTIONS, 405 and 307 answers need no
// token. A request forwarded by another node was checked there (nodes may
// have different admin tokens).
func (s *Server) adminGate(r *router.Router, next fasthttp.RequestHandler) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		path := string(ctx.Path())
		if path == "/healthz" || path == "/readyz" || ctx.UserValue(forwardedKey) != nil || !strings.HasPrefix(path, adminPrefix+"/") {
			next(ctx)
			return
		}
		if h, _ := r.Lookup(string(ctx.Method()), path, ctx); h == nil {
			next(ctx)
			return
		}
		token, found := bearerToken(ctx.Request.Header.Peek(fasthttp.HeaderAuthorization))
		given := hashSecret(token)
		if !found || subtle.ConstantTimeCompare(given[:], s.adminTokenHash[:]) != 1 {
			writeError(ctx, errUnauthorized)
			return
		}
		next(ctx)
	}
}

func (s *Server) createAccount(ctx *fasthttp.RequestCtx) *actors.Error {
	var req struct {
		Plan     *string `json:"plan"`
		Password *string `json:"password"`
	}
	if err := decodeBody(ctx, &req, ownerBodyBytesMax); err != nil {
		return err
	}
	if req.Plan == nil {
		return required("plan")
	}
	plan, known := actors.ParsePlan(*req.Plan)
	if !known {
		return actors.Errorf(actors.CodeValidation, "plan must be base or extended")
	}
	if req.Password == nil {
		return required("password")
	}
	c, cancel := s.context()
	defer cancel()
	created, err := s.CreateAccount(c, plan, *req.Password)
	if err != nil {
		return err
	}
	writeJSON(ctx, fasthttp.StatusCreated, created)
	return nil
}

func (s *Server) addNode(ctx *fasthttp.RequestCtx) *actors.Error {
	var req struct {
		ID       *string `json:"id"`
		RaftAddr *string `json:"raft_addr"`
	}
	if err := decodeBody(ctx, &req, ownerBodyBytesMax); err != nil {
		return err
	}
	if req.ID == nil || *req.ID == "" {
		return required("id")
	}
	if req.RaftAddr == nil || *req.RaftAddr == "" {
		return required("raft_addr")
	}
	if err := s.op.AddVoter(*req.ID, *req.RaftAddr); err != nil {
		return storeError(err)
	}
	writeJSON(ctx, fasthttp.StatusOK, map[string]string{"id": *req.ID, "raft_addr": *req.RaftAddr})
	return nil
}
