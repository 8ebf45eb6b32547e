package httpd

import (
	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/actors"
)

// Deleting the account: DELETE /owner/v1/account and the site's delete
// form. Like a password change or an owner-secret rotation it needs the
// current password, so that an owner secret or a session alone (stolen,
// or left open on a shared machine) cannot destroy the account; a wrong
// password earns the same back-off.

// accountDeleteRequest is the body of DELETE /owner/v1/account.
type accountDeleteRequest struct {
	Confirm *bool   `json:"confirm"`
	Current *string `json:"current_password"`
}

// deleteAccount answers DELETE /owner/v1/account
// {"confirm": true, "current_password"} with 204.
func (s *Server) deleteAccount(r *request) error {
	if err := s.bearer(r); err != nil {
		return err
	}
	var req accountDeleteRequest
	if err := decodeBody(r.ctx, &req, ownerBodyBytesMax); err != nil {
		return err
	}
	if req.Confirm == nil || !*req.Confirm {
		return actors.Errorf(actors.CodeValidation, `deleting the account needs {"confirm": true}`)
	}
	if req.Current == nil {
		return required("current_password")
	}
	if err := s.removeAccount(r, *req.Current); err != nil {
		return err
	}
	r.ctx.SetStatusCode(fasthttp.StatusNoContent)
	return nil
}

// removeAccount deletes the account of r's credential once the current
// password is checked, for the owner API and the site. The command carries
// no password hash: the check at the edge is what proves the owner asked,
// and DeleteAccount keeps the shape older releases apply.
func (s *Server) removeAccount(r *request, current string) error {
	c, cancel := s.context()
	defer cancel()
	who, _, err := s.authorizeWithPassword(c, r, current)
	if err != nil {
		return err
	}
	_, err = s.propose(c, &actors.Command{Account: r.cred.AccountID, At: s.now().UnixNano(), Principal: who.Principal, Payload: &actors.DeleteAccount{}})
	return err
}
