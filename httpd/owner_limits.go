package httpd

import (
	"context"
	"net"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/actors"
	"github.com/addrwatch/addrwatch/httpd/edge"
)

// The owner credential limits (the back-off of wrong passwords and bearer
// secrets) live in package edge (edge/owner.go). This file wires them to
// the Server: which bearer secrets count, and the password checks they
// guard.

// newOwnerLimits builds the owner credential ledgers for clients behind
// trusted.
func newOwnerLimits(trusted []*net.IPNet, now func() time.Time) *edge.OwnerLimits {
	e := edge.Edge{WriteError: writeError, Clients: clients(trusted)}
	return e.NewOwnerLimits(now, ownerBearer)
}

// ownerBearer names the account of a request that carries an owner secret
// or a session token; it reports false for any other request.
func ownerBearer(ctx *fasthttp.RequestCtx) (string, bool) {
	token, found := edge.BearerToken(ctx.Request.Header.Peek(fasthttp.HeaderAuthorization))
	if !found {
		return "", false
	}
	cred, valid := bearerShape(token)
	if !valid || (cred.Kind != actors.CredentialOwnerSecret && cred.Kind != actors.CredentialSession) {
		return "", false
	}
	return cred.AccountID, true
}

// checkOwnerPassword is checkPassword behind the client's and the
// account's back-off.
func (s *Server) checkOwnerPassword(c context.Context, r *request, cred actors.Credential, password string) (stored string, err error) {
	if refused := s.owner.AccountPassword(r.ctx, r.attempt, cred.AccountID, func() bool {
		stored, err = s.checkPassword(c, cred, password)
		return err == errWrongAccountOrPassword
	}); refused != nil {
		return "", refused
	}
	return stored, err
}
