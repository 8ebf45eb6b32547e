package admin

import (
	"bytes"
	"encoding/json"

	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/actors"
)

// Prefix is the base path of the operator API.
const Prefix = "/admin/v1"

// Register adds the admin API's routes to r: the operator's operations
// under Prefix, /metrics when there are metrics, Go's profiles, and the
// health probes.
func (a *API) Register(r Routes) {
	r.POST(Prefix+"/accounts", a.handle(a.createAccount))
	r.GET(Prefix+"/cluster", a.handle(func(ctx *fasthttp.RequestCtx) error {
		status, err := a.cfg.Operator.Status()
		if err != nil {
			return err
		}
		a.cfg.WriteJSON(ctx, fasthttp.StatusOK, a.withParts(status))
		return nil
	}))
	r.POST(Prefix+"/cluster/nodes", a.handle(a.addNode))
	r.DELETE(Prefix+"/cluster/nodes/{id}", a.handle(func(ctx *fasthttp.RequestCtx) error {
		id, _ := ctx.UserValue("id").(string)
		if err := a.cfg.Operator.RemoveServer(id); err != nil {
			return err
		}
		ctx.SetStatusCode(fasthttp.StatusNoContent)
		return nil
	}))
	r.POST(transferPath, a.handle(a.transferLeadership))
	r.POST(slotMovePath, a.handle(a.moveSlot))
	r.POST(drainPath, a.handle(a.drain))
	r.GET(Prefix+"/backup", a.handle(a.backup))
	r.POST(restorePath, a.handle(a.restore))
	r.POST(Prefix+"/snapshot", a.handle(func(ctx *fasthttp.RequestCtx) error {
		if err := a.cfg.Operator.Snapshot(); err != nil {
			return err
		}
		a.cfg.WriteJSON(ctx, fasthttp.StatusOK, map[string]bool{"snapshot_taken": true})
		return nil
	}))
	if a.cfg.Metrics != nil {
		r.GET("/metrics", a.metricsGate(metricsHandler(a.cfg.Metrics)))
	}
	// Profiles for operators and for the bench work: CPU, heap, goroutines.
	// They show the command line, so they need the operator token.
	r.GET(pprofPrefix+"{profile:*}", func(ctx *fasthttp.RequestCtx) {
		if !a.tokenValid(ctx) {
			a.cfg.WriteError(ctx, errUnauthorized)
			return
		}
		pprofHandler(ctx)
	})
	r.GET("/healthz", func(ctx *fasthttp.RequestCtx) {
		a.cfg.WriteJSON(ctx, fasthttp.StatusOK, map[string]string{"status": "ok"})
	})
	r.GET("/readyz", func(ctx *fasthttp.RequestCtx) {
		if !a.cfg.Operator.Ready() {
			a.cfg.WriteError(ctx, actors.Errorf(actors.CodeHTTPError, "not ready: no known leader"))
			return
		}
		a.cfg.WriteJSON(ctx, fasthttp.StatusOK, map[string]string{"status": "ready"})
	})
}

// ServedLocally lists admin paths about this node itself, which it
// answers whether it leads or not. Profiles are too: an operator
// profiling a follower wants that follower.
func ServedLocally(path []byte) bool {
	switch string(path) {
	case "/healthz", "/readyz", "/metrics", Prefix + "/cluster":
		return true
	}
	return bytes.HasPrefix(path, []byte(pprofPrefix))
}

func (a *API) createAccount(ctx *fasthttp.RequestCtx) error {
	var req struct {
		Plan     *string `json:"plan"`
		Password *string `json:"password"`
		Login    *string `json:"login"`
	}
	if err := a.cfg.DecodeJSON(ctx, &req); err != nil {
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
	created, err := a.cfg.Accounts.CreateAccount(plan, *req.Password, deref(req.Login))
	if err != nil {
		return err
	}
	a.cfg.WriteJSON(ctx, fasthttp.StatusCreated, created)
	return nil
}

func (a *API) addNode(ctx *fasthttp.RequestCtx) error {
	var req struct {
		ID       *string `json:"id"`
		RaftAddr *string `json:"raft_addr"`
	}
	if err := a.cfg.DecodeJSON(ctx, &req); err != nil {
		return err
	}
	if req.ID == nil || *req.ID == "" {
		return required("id")
	}
	if req.RaftAddr == nil || *req.RaftAddr == "" {
		return required("raft_addr")
	}
	added, err := a.cfg.Operator.AddNode(*req.ID, *req.RaftAddr)
	if err != nil {
		return err
	}
	a.cfg.WriteJSON(ctx, fasthttp.StatusOK, added)
	return nil
}

// transferPath hands a group's leadership over: {"id": ID} names the
// voter (any when left out), {"group": N} the group of a sharded cluster.
const transferPath = Prefix + "/cluster/transfer"

func (a *API) transferLeadership(ctx *fasthttp.RequestCtx) error {
	var req struct {
		ID    *string `json:"id"`
		Group *int    `json:"group"`
	}
	if len(ctx.PostBody()) > 0 {
		if err := a.cfg.DecodeJSON(ctx, &req); err != nil {
			return err
		}
	}
	var err error
	if req.Group != nil {
		groups, sharded := a.cfg.Operator.(GroupTransferer)
		if !sharded {
			return actors.Errorf(actors.CodeValidation, "this cluster has one raft group: leave group out")
		}
		err = groups.TransferGroupLeadership(*req.Group, deref(req.ID))
	} else {
		err = a.cfg.Operator.TransferLeadership(deref(req.ID))
	}
	if err != nil {
		return err
	}
	a.cfg.WriteJSON(ctx, fasthttp.StatusOK, map[string]bool{"transferred": true})
	return nil
}

// backup answers a consistent snapshot file of the whole state.
func (a *API) backup(ctx *fasthttp.RequestCtx) error {
	var buf bytes.Buffer
	if err := a.cfg.Operator.Backup(&buf); err != nil {
		return err
	}
	ctx.Response.Header.SetContentType("application/octet-stream")
	ctx.Response.Header.Set(fasthttp.HeaderContentDisposition, `attachment; filename="addrwatch-backup.snap"`)
	ctx.SetBody(buf.Bytes())
	return nil
}

// withParts is status with the StatusParts added to its object; status as
// it is when there are none or it is not an object.
func (a *API) withParts(status any) any {
	if len(a.cfg.StatusParts) == 0 {
		return status
	}
	b, err := json.Marshal(status)
	var fields map[string]any
	if err != nil || json.Unmarshal(b, &fields) != nil || fields == nil {
		return status
	}
	for name, part := range a.cfg.StatusParts {
		fields[name] = part()
	}
	return fields
}
