package admin

import (
	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/actors"
)

// Moving a slot between the raft groups of a sharded cluster
// (cluster/slotmove.go): POST /admin/v1/cluster/slots/move with
// {"slot": N, "to": G}, or {"account": ID, "to": G} to move the slot that
// account is in. The answer, 202, is the move as the meta group recorded
// it; the move itself goes on in the background, and the cluster status
// shows it until it ends.
const slotMovePath = Prefix + "/cluster/slots/move"

// SlotMove is a request to move a slot: Slot, or else the slot of
// Account, to group To.
type SlotMove struct {
	Slot    *int
	Account string
	To      int
}

// SlotMover is what a sharded node's Operator adds. MoveSlot answers the
// move as recorded, a VALIDATION error for a slot or group that does not
// exist, and a CONFLICT for a slot already there or already moving.
type SlotMover interface {
	MoveSlot(m SlotMove) (any, error)
}

func (a *API) moveSlot(ctx *fasthttp.RequestCtx) error {
	var req struct {
		Slot    *int    `json:"slot"`
		Account *string `json:"account"`
		To      *int    `json:"to"`
	}
	if err := a.cfg.DecodeJSON(ctx, &req); err != nil {
		return err
	}
	if req.To == nil || (req.Slot == nil) == (req.Account == nil) {
		return actors.Errorf(actors.CodeValidation, `send {"slot": N, "to": G} or {"account": ID, "to": G}`)
	}
	mover, sharded := a.cfg.Operator.(SlotMover)
	if !sharded {
		return actors.Errorf(actors.CodeValidation, "this cluster has one raft group: slots move only between the groups of a sharded cluster (--groups)")
	}
	move, err := mover.MoveSlot(SlotMove{Slot: req.Slot, Account: deref(req.Account), To: *req.To})
	if err != nil {
		return err
	}
	a.cfg.WriteJSON(ctx, fasthttp.StatusAccepted, move)
	return nil
}

// Draining a node of a sharded cluster before it is restarted:
// POST /admin/v1/cluster/drain with {"id": ID} hands over every group the
// node leads and keeps it from leading any, {"id": ID, "drain": false}
// ends that. The meta group's leader serves it (RouteMeta).
const drainPath = Prefix + "/cluster/drain"

// Drainer is what a sharded node's Operator adds: draining a node.
type Drainer interface {
	Drain(id string, on bool) error
}

func (a *API) drain(ctx *fasthttp.RequestCtx) error {
	var req struct {
		ID    *string `json:"id"`
		Drain *bool   `json:"drain"`
	}
	if err := a.cfg.DecodeJSON(ctx, &req); err != nil {
		return err
	}
	if req.ID == nil || *req.ID == "" {
		return actors.Errorf(actors.CodeValidation, `send {"id": ID} to drain a node, {"id": ID, "drain": false} to end it`)
	}
	drainer, sharded := a.cfg.Operator.(Drainer)
	if !sharded {
		return actors.Errorf(actors.CodeValidation, "this cluster has one raft group: move its leadership with POST /admin/v1/cluster/transfer")
	}
	on := req.Drain == nil || *req.Drain
	if err := drainer.Drain(*req.ID, on); err != nil {
		return err
	}
	a.cfg.WriteJSON(ctx, fasthttp.StatusOK, map[string]any{"id": *req.ID, "draining": on})
	return nil
}
