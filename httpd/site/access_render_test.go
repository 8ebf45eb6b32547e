package site

import (
	"regexp"
	"testing"

	"github.com/valyala/fasthttp"
)

// grantMenu matches one grant menu of the panel: its resource ID and its
// options.
var grantMenu = regexp.MustCompile(`<select id="grant-([^"]+)" name="level"[^>]*>\s*((?:<option[^>]*>[^<]*</option>)+)`)

var grantOption = regexp.MustCompile(`<option value="([^"]+)"( selected)?>([^<]*)</option>`)

// Every row's menu offers none, read and write, in that order, with the
// stored grant and only it selected, so saving a row unchanged keeps its
// grant.
func TestAccessPanelMenusSelectTheStoredGrant(t *testing.T) {
	s := New(Config{})
	v := fullPanelView()
	var ctx fasthttp.RequestCtx
	s.renderPage(&ctx, fasthttp.StatusOK, "access", sitePage{Signed: true, CSRF: "token", Data: newAccessData(v, "token")})
	want := map[string]string{}
	for _, r := range append(v.Cards, v.Spaces...) {
		want[r.ID] = r.Grant.String()
	}
	menus := grantMenu.FindAllStringSubmatch(string(ctx.Response.Body()), -1)
	if len(menus) != len(want) {
		t.Fatalf("%d grant menus on the page, want %d", len(menus), len(want))
	}
	for _, m := range menus {
		var values, selected []string
		for _, o := range grantOption.FindAllStringSubmatch(m[2], -1) {
			if o[1] != o[3] {
				t.Errorf("%s: option value %q shows %q", m[1], o[1], o[3])
			}
			values = append(values, o[1])
			if o[2] != "" {
				selected = append(selected, o[1])
			}
		}
		if len(values) != 3 || values[0] != "none" || values[1] != "read" || values[2] != "write" {
			t.Errorf("%s: options %v, want [none read write]", m[1], values)
		}
		if len(selected) != 1 || selected[0] != want[m[1]] {
			t.Errorf("%s: selected %v, want [%s]", m[1], selected, want[m[1]])
		}
	}
}
