package site

import (
	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/actors"
)

// The block explorer History links to, chosen on Account settings: one
// of the list the account's network is offered, none by default.

// explorerForm saves the choice, and comes back to the settings page.
func (s *Site) explorerForm(ctx *fasthttp.RequestCtx, sess *siteSession) {
	if _, err := s.siteWrite(sess, &actors.SetExplorer{Explorer: formValue(ctx, "explorer")}); err != nil {
		s.renderSettings(ctx, sess, s.edge.Status(err.Code), "", "The block explorer was not changed: "+err.Message+".")
		return
	}
	s.redirect(ctx, "/settings?m=explorer#explorer-heading")
}
