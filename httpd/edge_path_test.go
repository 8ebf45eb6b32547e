package httpd

import (
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/actors"
)

func TestRefusePath(t *testing.T) {
	for _, c := range []struct {
		uri     string
		refused bool
	}{
		{"/v1/me", false},
		{"/v1/me/", false},
		{"/v1/me//", false},
		{"/v1/../v1/me", false},
		{"//evil.example/../v1/docs/", true},
		{"//v1/me", true},
		{"/v1\\me", true},
		{"/v1/%5Cme", true},
		{"/v1/%5cme", true},
		{"/\\evil.example/v1/me", true},
	} {
		var ctx fasthttp.RequestCtx
		ctx.Request.Header.SetRequestURI(c.uri)
		ctx.Request.Header.SetHost("x")
		err := typedErr(refusePath(&ctx))
		if (err != nil) != c.refused || (err != nil && err.Code != actors.CodeNotFound) {
			t.Errorf("refusePath(%s) = %v, want refused %v with NOT_FOUND", c.uri, err, c.refused)
		}
	}
}

func TestRedirectTargetIsThePathOnThisServer(t *testing.T) {
	for _, c := range []struct {
		path, query, want string
	}{
		{"/v1/me", "", "/v1/me"},
		{"/v1/me", "a=1&b=two%20words", "/v1/me?a=1&b=two%20words"},
		{"/v1/portfolio/cards/a b", "", "/v1/portfolio/cards/a%20b"},
	} {
		if got := redirectTarget(c.path, []byte(c.query)); got != c.want {
			t.Errorf("redirectTarget(%q, %q) = %q, want %q", c.path, c.query, got, c.want)
		}
	}
}
