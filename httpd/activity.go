package httpd

import (
	"strings"

	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/actors"
	"github.com/addrwatch/addrwatch/httpd/activity"
)

// activityKeyRef names an API key whose request is counted in its
// activity (package httpd/activity).
type activityKeyRef struct{ account, keyID string }

// countActivity counts r, answered by the route op (its method and
// pattern) with status, in its key's activity (package httpd/activity),
// if a query authenticated its key (request.go).
func countActivity(l *activity.Log, r *request, op, route string, status int) {
	if r.key.keyID == "" {
		return
	}
	l.Count(activity.Line{Account: r.key.account, KeyID: r.key.keyID, Op: op,
		Resource: activityResource(r.ctx, route), Status: status, Code: r.code}, r.cred.Now)
}

// activityResource names the resource of a request from its path: a card,
// a Space or a transaction's note. An ID that could not be one (too long,
// not printable) is left out: it names nothing the account holds.
func activityResource(ctx *fasthttp.RequestCtx, route string) actors.ResourceRef {
	if !strings.Contains(route, "{") {
		return actors.ResourceRef{} // a route without parameters names none
	}
	id := func(name string) string {
		v := pathParam(ctx, name)
		if len(v) > 64 || !printableASCII(v) {
			return ""
		}
		return v
	}
	switch card, space, txid := id("card_id"), id("space_id"), id("txid"); {
	case card != "" && strings.Contains(route, "/portfolio/"):
		return actors.ResourceRef{Kind: actors.ResourcePortfolioCard, ID: card}
	case card != "":
		return actors.ResourceRef{Kind: actors.ResourceBookmarkCard, ID: card, SpaceID: space}
	case space != "":
		return actors.ResourceRef{Kind: actors.ResourceSpace, ID: space}
	case txid != "":
		return actors.ResourceRef{Kind: actors.ResourceNote, ID: txid}
	}
	return actors.ResourceRef{}
}

func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7e {
			return false
		}
	}
	return true
}
