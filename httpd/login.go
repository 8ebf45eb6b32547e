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
func (s *Server) setLogin(ctx *fasthttp.RequestCtx) error {
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
	res, err := s.replaceLogin(ctx, cred, *req.Login, *req.Current)
	if err != nil {
		return err
	}
	writeJSON(ctx, fasthttp.StatusOK, res.Body)
	return nil
}

// replaceLogin sets the login of cred's account once the current password
// is checked, for the owner API and the site.
func (s *Server) replaceLogin(ctx *fasthttp.RequestCtx, cred actors.Credential, login, current string) (actors.Result, error) {
	if err := actors.ValidateLogin(login); err != nil {
		return actors.Result{}, err
	}
	c, cancel := s.context()
	defer cancel()
	who, stored, err := s.authorizeWithPassword(c, ctx, cred, current)
	if err != nil {
		return actors.Result{}, err
	}
	return s.propose(c, &actors.Command{Account: cred.AccountID, At: s.now().UnixNano(), Principal: who.Principal,
		Payload: &actors.SetLogin{Login: login, ExpectedPasswordHash: stored}})
}
