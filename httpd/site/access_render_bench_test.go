package site

import (
	"fmt"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/actors"
)

// fullPanelView is the API access panel of an extended account at its
// limits, as bench's site scenario loads it: 20 keys, ten Account cards
// and ten Spaces, with none, read and write grants.
func fullPanelView() actors.AccessPanelView {
	v := actors.AccessPanelView{AccountID: "stvas32yjitu6cnx", Login: "owner@example.com", Plan: actors.PlanExtended}
	levels := []actors.Level{actors.LevelNone, actors.LevelRead, actors.LevelWrite}
	for k := range 20 {
		v.Keys = append(v.Keys, actors.KeyView{KeyID: fmt.Sprintf("kost5guw6mwci%03d", k), Capability: levels[1+k%2],
			Name: fmt.Sprintf("site agent %02d", k+1), CreatedAt: "2026-11-25T13:24:57.123456789Z"})
	}
	resource := func(kind actors.ResourceKind, id, name, detail string, grant actors.Level) actors.PanelResource {
		return actors.PanelResource{Kind: kind, ID: id, Name: name, Detail: detail, Grant: grant,
			ReadKeySees: min(grant, actors.LevelRead), WriteKeySees: grant}
	}
	for k := range 10 {
		v.Cards = append(v.Cards, resource(actors.ResourcePortfolioCard, fmt.Sprintf("qezeode5wia5c%03d", k),
			fmt.Sprintf("site card %02d", k+1), "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq", levels[k%3]))
		v.Spaces = append(v.Spaces, resource(actors.ResourceSpace, fmt.Sprintf("4lrnzkakplasw%03d", k),
			fmt.Sprintf("bench sheet %d", k+1), "sheet", levels[1+k%2]))
	}
	return v
}

// BenchmarkRenderFullAccessPanel is the full panel's render alone, without
// the sign-in check and the account actor's query: the part of bench's
// site scenario that html/template costs.
func BenchmarkRenderFullAccessPanel(b *testing.B) {
	s := New(Config{})
	v := fullPanelView()
	csrf := csrfToken("awt.benchmark-session-token")
	var ctx fasthttp.RequestCtx
	b.ReportAllocs()
	for b.Loop() {
		ctx.Response.Reset()
		page := sitePage{Title: "API access", Nav: "access", Signed: true, CSRF: csrf, AccountID: v.AccountID,
			Login: v.Login, Plan: v.Plan.String(), Data: newAccessData(v, csrf)}
		s.renderPage(&ctx, fasthttp.StatusOK, "access", page)
	}
	b.SetBytes(int64(len(ctx.Response.Body())))
}
