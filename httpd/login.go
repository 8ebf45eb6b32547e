package httpd

import (
	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/actors"
)

// The owner's login: GET /owner/v1/account shows it with the account id
// and plan, and PUT /owner/v1/login sets or changes it.

func (s *Server) registerLogin(r routeAdder) {
	r.GET(ownerPrefix+"/account", func(ctx *fasthttp.RequestCtx) {
		s.read(ctx, audienceOwner, actors.AccountQuery{})
	})
	r.PUT(ownerPrefix+"/login", handle(s.setLogin))
}

// setLogin sets or changes the login. It needs the current password, like
// an owner-secret rotation, so that a stolen session or owner secret alone
// cannot change how the account signs in.
func (s *Server) setLogin(ctx *fasthttp.RequestCtx) *actors.Error {
	cred, err := s.credential(ctx, audienceOwner)
	if err != nil {
		return err
	}
	var req struct {
		Login   *string `json:"login"`
		Current *string `json:"current_password"`
	}
	if err := decodeBody(ctx, &req, ownerBodyBytesMax); err != nil {
		return err
	}
	if req.Login == nil {
		return required("login")
	}
	if req.Current == nil {
		return required("current_password")
	}
	if err := actors.ValidateLogin(*req.Login); err != nil {
		return err
	}
	c, cancel := s.context()
	defer cancel()
	who, stored, err := s.authorizeWithPassword(c, ctx, cred, *req.Current)
	if err != nil {
		return err
	}
	res, err := s.propose(c, &actors.Command{Account: cred.AccountID, At: s.now().UnixNano(), Principal: who.Principal,
		Payload: &actors.SetLogin{Login: *req.Login, ExpectedPasswordHash: stored}})
	if err != nil {
		return err
	}
	writeJSON(ctx, fasthttp.StatusOK, res.Body)
	return nil
}
