package site

import (
	"strconv"

	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/actors"
)

// The live view. Every signed-in page carries the account's last change
// at the time it was drawn (data-live-cursor); site.js asks GET /live for
// the changes after it about once a second, and redraws the parts of the
// page they touch (see site.js). Polling, not server-sent events: a poll
// is an ordinary short request, so it works through a follower (which
// forwards it to the leader like any other) and across a leader change,
// and costs one actor read of the audit log's tail per open page per
// second. The answer lists resource IDs: only the owner may ask.

func (s *Site) liveChanges(ctx *fasthttp.RequestCtx, sess *siteSession) {
	siteHeaders(ctx)
	after, err := strconv.ParseUint(string(ctx.QueryArgs().Peek("after")), 10, 64)
	if err != nil {
		s.edge.WriteError(ctx, actors.Errorf(actors.CodeValidation, "after must be the cursor of a page"))
		return
	}
	res, qerr := ask(s, sess, actors.LiveQuery{AfterSeq: after})
	if qerr != nil {
		s.edge.WriteError(ctx, qerr)
		return
	}
	s.edge.WriteJSON(ctx, fasthttp.StatusOK, res)
}
