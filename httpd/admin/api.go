package admin

import (
	"crypto/sha256"
	"io"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/actors"
)

// Operator is what the admin API needs from the node.
type Operator interface {
	// Status describes the cluster (rendered as JSON as is).
	Status() (any, error)
	// Snapshot takes a snapshot now.
	Snapshot() error
	// AddNode adds a node to the cluster as a non-voter (the leader promotes
	// it once it has caught up) and describes it
	// (rendered as JSON as is). A bad id or address is a VALIDATION
	// error, a clash with another member a CONFLICT.
	AddNode(id, raftAddr string) (any, error)
	// RemoveServer removes a server from the cluster. A removal that
	// would leave the voters without a quorum of nodes that are up is a
	// CONFLICT.
	RemoveServer(id string) error
	// Ready reports whether this node can serve: it is part of a cluster
	// with a known leader and has caught up.
	Ready() bool
	// TransferLeadership hands leadership to the voter id (any when empty).
	TransferLeadership(id string) error
	// Backup writes a consistent snapshot of the whole state to w.
	Backup(w io.Writer) error
	// Restore replaces the whole state with a backup file.
	Restore(path string) error
}

// GroupTransferer is what a sharded node's Operator adds: handing one
// group's leadership over (POST /admin/v1/cluster/transfer with
// {"group": N}, which the edge forwards to that group's leader).
type GroupTransferer interface {
	TransferGroupLeadership(group int, id string) error
}

// Accounts creates accounts, with the secrets and password hash the
// server that mounts the admin API makes (the operator is the only one
// who creates accounts).
type Accounts interface {
	// CreateAccount creates an account with its first Space and returns
	// what the operator is told (rendered as JSON as is), its owner secret
	// included. login is optional (empty for none). The call is bounded by
	// the server's request timeout.
	CreateAccount(plan actors.Plan, password, login string) (created any, err error)
}

// Config wires an API. Every field but Metrics, OpenMetrics and SpoolDir
// is required.
type Config struct {
	// Operator is the node's operations; Accounts creates accounts.
	Operator Operator
	Accounts Accounts
	// Log receives what the operator is not told (a spool file that
	// cannot be written, say).
	Log *slog.Logger
	// Token is the operator token every admin operation needs.
	Token string
	// Metrics, when set, is served at /metrics; OpenMetrics serves it
	// without the operator token.
	Metrics     prometheus.Gatherer
	OpenMetrics bool
	// SpoolDir holds an uploaded backup until the restore has read it;
	// empty means the system's temporary directory.
	SpoolDir string
	// DecodeJSON decodes a request's JSON object body into dst with the
	// API's rules (content type, strict members, the owner API's size
	// bound), answering a VALIDATION error for anything else.
	DecodeJSON func(ctx *fasthttp.RequestCtx, dst any) error
	// WriteError answers with the spec's {code, error} body of err and its
	// status: the one conversion every room uses.
	WriteError func(ctx *fasthttp.RequestCtx, err error)
	// WriteJSON answers with body as JSON.
	WriteJSON func(ctx *fasthttp.RequestCtx, status int, body any)
	// StatusParts are added to GET /admin/v1/cluster, each under its
	// name, beside the operator's status: what else runs on the node (the
	// chain follower's counts).
	StatusParts map[string]func() any
}

// API is the admin API: its routes, the operator token's gate in front of
// them, and the admin listener's body rules.
type API struct {
	cfg       Config
	tokenHash actors.Hash
}

// New builds the admin API.
func New(cfg Config) *API {
	return &API{cfg: cfg, tokenHash: sha256.Sum256([]byte(cfg.Token))}
}

// Routes is the part of a router the admin API registers on.
type Routes interface {
	GET(path string, handler fasthttp.RequestHandler)
	POST(path string, handler fasthttp.RequestHandler)
	DELETE(path string, handler fasthttp.RequestHandler)
}

// handle adapts a route body that returns its error to fasthttp, writing
// a returned error with Config.WriteError.
func (a *API) handle(h func(ctx *fasthttp.RequestCtx) error) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		if err := h(ctx); err != nil {
			a.cfg.WriteError(ctx, err)
		}
	}
}

// required is the error of a missing field, as every room words it.
func required(field string) error {
	return actors.Errorf(actors.CodeValidation, "field %q is required", field)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
