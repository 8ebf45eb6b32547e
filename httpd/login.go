package httpd

import (
	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/actors"
)

// The owner's login: GET /owner/v1/account shows it with the account id
// and plan, and PUT /owner/v1/login sets or changes it.

var loginOperations = []operation{
	{id: "getAccount", method: fasthttp.MethodGet, path: "/account", apis: ownerAPI,
		response: answerOf(actors.AccountQuery{}), status: fasthttp.StatusOK,
		serve: func(s *Server, r *request) error { return s.read(r, actors.AccountQuery{}) }},
	{id: "getAccountSummary", method: fasthttp.MethodGet, path: "/account/summary", apis: ownerAPI,
		response: answerOf(actors.AccountSummaryQuery{}), status: fasthttp.StatusOK,
		serve: func(s *Server, r *request) error { return s.read(r, actors.AccountSummaryQuery{}) }},
	{id: "setLogin", method: fasthttp.MethodPut, path: "/login", apis: ownerAPI,
		request: typeOf[loginRequest](), response: typeOf[actors.LoginView](), status: fasthttp.StatusOK,
		serve: (*Server).setLogin},
}

// loginRequest is the body of PUT /owner/v1/login.
type loginRequest struct {
	Login   *string `json:"login"`
	Current *string `json:"current_password"`
}

// setLogin sets or changes the login. It needs the current password, like
// an owner-secret rotation, so that a stolen session or owner secret alone
// cannot change how the account signs in.
func (s *Server) setLogin(r *request) error {
	if err := s.bearer(r); err != nil {
		return err
	}
	var req loginRequest
	if err := decodeBody(r.ctx, &req, ownerBodyBytesMax); err != nil {
		return err
	}
	if req.Login == nil {
		return required("login")
	}
	if req.Current == nil {
		return required("current_password")
	}
	res, err := s.replaceLogin(r, *req.Login, *req.Current)
	if err != nil {
		return err
	}
	return answer(r.ctx, fasthttp.StatusOK, res.Body)
}

// replaceLogin sets the login of the account of r's credential once the
// current password is checked, for the owner API and the site.
func (s *Server) replaceLogin(r *request, login, current string) (actors.Result, error) {
	if err := actors.ValidateLogin(login); err != nil {
		return actors.Result{}, err
	}
	c, cancel := s.context()
	defer cancel()
	who, stored, err := s.authorizeWithPassword(c, r, current)
	if err != nil {
		return actors.Result{}, err
	}
	return s.propose(c, &actors.Command{Account: r.cred.AccountID, At: s.now().UnixNano(), Principal: who.Principal,
		Payload: &actors.SetLogin{Login: login, ExpectedPasswordHash: stored}})
}
