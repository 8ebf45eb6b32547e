package httpd

import (
	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/actors"
	"github.com/addrwatch/addrwatch/httpd/admin"
)

// The admin API lives in package admin; this wires it to the Server: the
// node's operations, account creation (service.go), the spec's error and
// JSON answers and the owner API's JSON decoding. The Server mounts its
// routes and gate on the admin listeners (server.go, adminRoutes: the
// forwarded admin listener's gate is told that a node checked the token),
// its body rules on the admin
// listener's edge (edge.go), and asks it how a cluster operation is
// routed (routing.go).

// newAdmin builds the admin API of cfg on s.
func (s *Server) newAdmin(cfg Config) *admin.API {
	a := admin.Config{
		Operator:    cfg.Operator,
		Accounts:    adminAccounts{s},
		Log:         s.log,
		Token:       cfg.AdminToken,
		OpenMetrics: cfg.OpenMetrics,
		SpoolDir:    cfg.SpoolDir,
		DecodeJSON: func(ctx *fasthttp.RequestCtx, dst any) error {
			return decodeBody(ctx, dst, ownerBodyBytesMax)
		},
		WriteError:  writeError,
		WriteJSON:   writeJSON,
		StatusParts: cfg.StatusParts,
	}
	if cfg.Metrics != nil { // a nil *Registry would be a Gatherer that is not nil
		a.Metrics = cfg.Metrics
	}
	return admin.New(a)
}

// adminAccounts creates accounts for the admin API (service.go).
type adminAccounts struct{ s *Server }

func (a adminAccounts) CreateAccount(plan actors.Plan, password, login string) (any, error) {
	c, cancel := a.s.context()
	defer cancel()
	created, err := a.s.CreateAccount(c, plan, password, login)
	if err != nil {
		return nil, err
	}
	return created, nil
}
