package httpd

import (
	"bytes"
	"crypto/subtle"
	"strings"

	"github.com/fasthttp/router"
	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/actors"
	"github.com/addrwatch/addrwatch/httpd/forward"
)

// adminPrefix is the base path of the operator API.
const adminPrefix = "/admin/v1"

func (s *Server) registerAdmin(r routeAdder) {
	r.POST(adminPrefix+"/accounts", handle(s.createAccount))
	r.GET(adminPrefix+"/cluster", handle(func(ctx *fasthttp.RequestCtx) error {
		status, err := s.op.Status()
		if err != nil {
			return specError(err)
		}
		writeJSON(ctx, fasthttp.StatusOK, status)
		return nil
	}))
	r.POST(adminPrefix+"/cluster/nodes", handle(s.addNode))
	r.DELETE(adminPrefix+"/cluster/nodes/{id}", handle(func(ctx *fasthttp.RequestCtx) error {
		if err := s.op.RemoveServer(pathParam(ctx, "id")); err != nil {
			return specError(err)
		}
		ctx.SetStatusCode(fasthttp.StatusNoContent)
		return nil
	}))
	r.POST(adminPrefix+"/cluster/transfer", handle(s.transferLeadership))
	r.POST(slotMovePath, handle(s.moveSlot))
	r.POST(drainPath, handle(s.drain))
	r.GET(adminPrefix+"/backup", handle(s.backup))
	r.POST(adminPrefix+"/restore", handle(s.restore))
	r.POST(adminPrefix+"/snapshot", handle(func(ctx *fasthttp.RequestCtx) error {
		if err := s.op.Snapshot(); err != nil {
			return specError(err)
		}
		writeJSON(ctx, fasthttp.StatusOK, map[string]bool{"snapshot_taken": true})
		return nil
	}))
	if s.registry != nil {
		r.GET("/metrics", s.metricsGate(metricsHandler(s.registry)))
	}
	// Profiles for operators and for the bench work: CPU, heap, goroutines.
	// They show the command line, so they need the operator token.
	r.GET(pprofPrefix+"{profile:*}", func(ctx *fasthttp.RequestCtx) {
		if !s.adminTokenValid(ctx) {
			writeError(ctx, errUnauthorized)
			return
		}
		pprofHandler(ctx)
	})
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

// adminGate checks the operator token on every admin operation (a route
// and method the router serves, health probes aside) before anything else
// happens to it, forwarding included. OPTIONS, 405 and 307 answers need no
// token. A request another node forwarded over a node connection was
// checked there (nodes may have different admin tokens), unless node
// connections are plain TCP, on which any process can claim to be a node;
// nothing else stands in for the token.
func (s *Server) adminGate(r *router.Router, next fasthttp.RequestHandler) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		path := string(ctx.Path())
		checkedByNode := forward.Forwarded(ctx) && !s.nodesUnauthenticated
		if path == "/healthz" || path == "/readyz" || checkedByNode || !strings.HasPrefix(path, adminPrefix+"/") {
			next(ctx)
			return
		}
		if h, _ := r.Lookup(string(ctx.Method()), path, ctx); h == nil {
			next(ctx)
			return
		}
		if !s.adminTokenValid(ctx) {
			writeError(ctx, errUnauthorized)
			return
		}
		next(ctx)
	}
}

// adminTokenValid compares the request's bearer with the operator token in
// constant time.
func (s *Server) adminTokenValid(ctx *fasthttp.RequestCtx) bool {
	token, found := bearerToken(ctx.Request.Header.Peek(fasthttp.HeaderAuthorization))
	given := hashSecret(token)
	return found && subtle.ConstantTimeCompare(given[:], s.adminTokenHash[:]) == 1
}

func (s *Server) createAccount(ctx *fasthttp.RequestCtx) error {
	var req struct {
		Plan     *string `json:"plan"`
		Password *string `json:"password"`
		Login    *string `json:"login"`
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
	if req.Login != nil {
		if err := actors.ValidateLogin(*req.Login); err != nil {
			return err
		}
	}
	c, cancel := s.context()
	defer cancel()
	created, err := s.CreateAccount(c, plan, *req.Password, deref(req.Login))
	if err != nil {
		return err
	}
	writeJSON(ctx, fasthttp.StatusCreated, created)
	return nil
}

func (s *Server) addNode(ctx *fasthttp.RequestCtx) error {
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
	added, err := s.op.AddNode(*req.ID, *req.RaftAddr)
	if err != nil {
		return specError(err)
	}
	writeJSON(ctx, fasthttp.StatusOK, added)
	return nil
}

func (s *Server) transferLeadership(ctx *fasthttp.RequestCtx) error {
	var req struct {
		ID    *string `json:"id"`
		Group *int    `json:"group"`
	}
	if len(ctx.PostBody()) > 0 {
		if err := decodeBody(ctx, &req, ownerBodyBytesMax); err != nil {
			return err
		}
	}
	var err error
	if req.Group != nil {
		groups, sharded := s.op.(GroupTransferer)
		if !sharded {
			return actors.Errorf(actors.CodeValidation, "this cluster has one raft group: leave group out")
		}
		err = groups.TransferGroupLeadership(*req.Group, deref(req.ID))
	} else {
		err = s.op.TransferLeadership(deref(req.ID))
	}
	if err != nil {
		return specError(err)
	}
	writeJSON(ctx, fasthttp.StatusOK, map[string]bool{"transferred": true})
	return nil
}

// GroupTransferer is what a sharded node's Operator adds: handing one
// group's leadership over (POST /admin/v1/cluster/transfer with
// {"group": N}, which the edge forwards to that group's leader).
type GroupTransferer interface {
	TransferGroupLeadership(group int, id string) error
}

// backup answers a consistent snapshot file of the whole state.
func (s *Server) backup(ctx *fasthttp.RequestCtx) error {
	var buf bytes.Buffer
	if err := s.op.Backup(&buf); err != nil {
		return specError(err)
	}
	ctx.Response.Header.SetContentType("application/octet-stream")
	ctx.Response.Header.Set(fasthttp.HeaderContentDisposition, `attachment; filename="addrwatch-backup.snap"`)
	ctx.SetBody(buf.Bytes())
	return nil
}
