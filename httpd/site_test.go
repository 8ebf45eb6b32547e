package httpd

import (
	"net"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/httpd/edge"
)

// siteClient is a browser stand-in for the site's rules: it keeps cookies
// and sends forms. (The browser itself drives the site in system_test.)
type siteClient struct {
	o       *ownerTest
	ip      string
	cookies map[string]string
	origin  string // the Origin header of posts; "" sends none
	accept  string // the Accept header; "" sends none
}

const siteTestHost = "addrwatch.test"

func newSiteClient(o *ownerTest) *siteClient {
	return &siteClient{o: o, ip: "198.51.100.20", cookies: map[string]string{}, origin: "http://" + siteTestHost}
}

type siteAnswer struct {
	status   int
	body     string
	location string
	header   *fasthttp.ResponseHeader
	cookies  map[string]*fasthttp.Cookie
}

func (c *siteClient) do(method, path string, form url.Values) siteAnswer {
	c.o.t.Helper()
	var req fasthttp.Request
	req.Header.SetMethod(method)
	req.SetRequestURI(path)
	req.Header.SetHost(siteTestHost)
	if c.accept != "" {
		req.Header.Set(fasthttp.HeaderAccept, c.accept)
	}
	for k, v := range c.cookies {
		req.Header.SetCookie(k, v)
	}
	if form != nil {
		req.Header.SetContentType("application/x-www-form-urlencoded")
		req.SetBodyString(form.Encode())
		if c.origin != "" {
			req.Header.Set("Origin", c.origin)
		}
	}
	ctx := &fasthttp.RequestCtx{}
	ctx.Init(&req, &net.TCPAddr{IP: net.ParseIP(c.ip), Port: 40000}, nil)
	c.o.handler(ctx)
	a := siteAnswer{status: ctx.Response.StatusCode(), body: string(ctx.Response.Body()),
		location: string(ctx.Response.Header.Peek(fasthttp.HeaderLocation)), cookies: map[string]*fasthttp.Cookie{}}
	a.header = &fasthttp.ResponseHeader{}
	ctx.Response.Header.CopyTo(a.header)
	for key, value := range ctx.Response.Header.Cookies() {
		ck := &fasthttp.Cookie{}
		if err := ck.ParseBytes(value); err != nil {
			c.o.t.Fatalf("bad Set-Cookie %q", value)
		}
		a.cookies[string(key)] = ck
		if ck.MaxAge() < 0 || len(ck.Value()) == 0 {
			delete(c.cookies, string(key))
		} else {
			c.cookies[string(key)] = string(ck.Value())
		}
	}
	return a
}

var csrfInput = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// formToken returns the CSRF token of the page's forms.
func formToken(t testing.TB, page siteAnswer) string {
	t.Helper()
	m := csrfInput.FindStringSubmatch(page.body)
	if m == nil {
		t.Fatalf("no form token on the page (status %d): %.300s", page.status, page.body)
	}
	return m[1]
}

// signIn signs in through the form and returns the session cookie.
func (c *siteClient) signIn(login, password string) siteAnswer {
	c.o.t.Helper()
	page := c.do("GET", "/", nil)
	return c.do("POST", "/sign-in", url.Values{"csrf": {formToken(c.o.t, page)}, "login": {login}, "password": {password}})
}

func (c *siteClient) mustSignIn() {
	c.o.t.Helper()
	a := c.signIn(c.o.account.AccountID, c.o.password)
	if a.status != fasthttp.StatusSeeOther || a.location != "/portfolio" || c.cookies[sessionCookie] == "" {
		c.o.t.Fatalf("sign-in: %d to %q, cookies %v: %.300s", a.status, a.location, c.cookies, a.body)
	}
}

// post sends a form from the page at from, with that page's token.
func (c *siteClient) post(from, path string, form url.Values) siteAnswer {
	c.o.t.Helper()
	if form == nil {
		form = url.Values{}
	}
	form.Set("csrf", formToken(c.o.t, c.do("GET", from, nil)))
	return c.do("POST", path, form)
}

// submit sends a form as post does and, as a browser does, follows the
// 303 that answers it: it returns the page the browser then shows, and the
// POST's own answer (which is that page when it is no redirect).
func (c *siteClient) submit(from, path string, form url.Values) (page, answer siteAnswer) {
	c.o.t.Helper()
	answer = c.post(from, path, form)
	if answer.status != fasthttp.StatusSeeOther {
		return answer, answer
	}
	return c.do("GET", answer.location, nil), answer
}

func (o *ownerTest) keyCount() int {
	o.t.Helper()
	status, _, body := o.send("192.0.2.1", "GET", "/owner/v1/keys", o.account.OwnerSecret, nil)
	if status != 200 {
		o.t.Fatalf("listing keys: %d %v", status, body)
	}
	return len(body["keys"].([]any))
}

func TestSiteSignInSetsAStrictHTTPOnlyCookie(t *testing.T) {
	t.Parallel()
	o := newOwnerTest(t)
	c := newSiteClient(o)
	page := c.do("GET", "/", nil)
	if page.status != 200 || !strings.Contains(page.body, `<form method="post" action="/sign-in">`) {
		t.Fatalf("signed-out / is not the sign-in page: %d %.200s", page.status, page.body)
	}
	a := c.signIn(o.account.AccountID, o.password)
	ck := a.cookies[sessionCookie]
	if a.status != fasthttp.StatusSeeOther || ck == nil {
		t.Fatalf("sign-in answered %d, cookies %v", a.status, a.cookies)
	}
	if !ck.HTTPOnly() || ck.SameSite() != fasthttp.CookieSameSiteStrictMode || string(ck.Path()) != "/" || ck.Secure() {
		t.Fatalf("session cookie %s: want HttpOnly, SameSite=Strict, Path=/ and (over plain HTTP) no Secure", ck)
	}
	if home := c.do("GET", "/", nil); home.status != fasthttp.StatusSeeOther || home.location != "/portfolio" {
		t.Fatalf("signed-in / answered %d to %q", home.status, home.location)
	}
	if panel := c.do("GET", "/access", nil); panel.status != 200 || !strings.Contains(panel.body, "API keys") {
		t.Fatalf("panel %d", panel.status)
	}
}

func TestSiteWrongLoginAndWrongPasswordLookAlike(t *testing.T) {
	t.Parallel()
	o := newOwnerTest(t)
	wrongPassword := newSiteClient(o).signIn(o.account.AccountID, "not the password")
	unknown := newSiteClient(o).signIn("nobody-has-this", "not the password")
	if wrongPassword.status != fasthttp.StatusUnauthorized || unknown.status != wrongPassword.status {
		t.Fatalf("statuses %d and %d", wrongPassword.status, unknown.status)
	}
	problem := regexp.MustCompile(`<p class="problem" role="alert">([^<]*)</p>`)
	a, b := problem.FindStringSubmatch(wrongPassword.body), problem.FindStringSubmatch(unknown.body)
	if a == nil || b == nil || a[1] != b[1] {
		t.Fatalf("the messages differ: %q and %q", a, b)
	}
}

// Cross-site forms are refused with 403 and change nothing: a wrong
// Origin, no Origin at all, or a missing or wrong token.
func TestSiteRefusesCrossSiteForms(t *testing.T) {
	t.Parallel()
	o := newOwnerTest(t)
	c := newSiteClient(o)
	c.mustSignIn()
	token := formToken(t, c.do("GET", "/access", nil))
	create := func(origin, csrf string) int {
		c.origin = origin
		defer func() { c.origin = "http://" + siteTestHost }()
		form := url.Values{"name": {"x"}, "capability": {"write"}}
		if csrf != "" {
			form.Set("csrf", csrf)
		}
		return c.do("POST", "/access/keys", form).status
	}
	for _, tc := range []struct{ what, origin, csrf string }{
		{"another site's Origin", "https://evil.example", token},
		{"our host over another scheme", "https://" + siteTestHost, token},
		{"Origin null", "null", token},
		{"no Origin or Referer", "", token},
		{"no token", "http://" + siteTestHost, ""},
		{"a wrong token", "http://" + siteTestHost, strings.Repeat("a", len(token))},
	} {
		if status := create(tc.origin, tc.csrf); status != fasthttp.StatusForbidden {
			t.Errorf("%s: %d, want 403", tc.what, status)
		}
	}
	if n := o.keyCount(); n != 0 {
		t.Fatalf("refused forms created %d keys", n)
	}
	if status := create("http://"+siteTestHost, token); status != fasthttp.StatusSeeOther {
		t.Fatalf("the same form from our page: %d", status)
	}
	if n := o.keyCount(); n != 1 {
		t.Fatalf("%d keys after one create", n)
	}
	// The sign-in form is protected too (login CSRF).
	c2 := newSiteClient(o)
	c2.do("GET", "/", nil)
	if a := c2.do("POST", "/sign-in", url.Values{"login": {o.account.AccountID}, "password": {o.password}}); a.status != fasthttp.StatusForbidden || c2.cookies[sessionCookie] != "" {
		t.Fatalf("sign-in without its token: %d, cookies %v", a.status, c2.cookies)
	}
}

// A guessed or ended session reaches nothing, and a client that keeps
// guessing is slowed down like one guessing owner secrets.
func TestSiteGuessedSessionReachesNothing(t *testing.T) {
	t.Parallel()
	o := newOwnerTest(t)
	c := newSiteClient(o)
	c.cookies[sessionCookie] = "awt." + o.account.AccountID + ".guessedsession00.guessedsecretguessedsecretguessedsecretguessedsecret"
	for _, path := range []string{"/access", "/settings", "/downloads", "/downloads/history.csv"} {
		a := c.do("GET", path, nil)
		if a.status != fasthttp.StatusSeeOther || a.location != "/?m=expired" || strings.Contains(a.body, "API keys") {
			t.Fatalf("%s with a guessed cookie: %d to %q", path, a.status, a.location)
		}
		c.cookies[sessionCookie] = "awt." + o.account.AccountID + ".guessedsession00.guessedsecretguessedsecretguessedsecretguessedsecret"
	}
	// An owner secret or an API key in the cookie is no session either.
	c.cookies[sessionCookie] = o.account.OwnerSecret
	if a := c.do("GET", "/access", nil); a.status != fasthttp.StatusSeeOther {
		t.Fatalf("the owner secret as a cookie: %d", a.status)
	}
	c.cookies[sessionCookie] = "awt." + o.account.AccountID + ".guessedsession00.guessedsecretguessedsecretguessedsecretguessedsecret"
	var last siteAnswer
	for range edge.ClientBackoff.Free + 2 {
		last = c.do("GET", "/access", nil)
		c.cookies[sessionCookie] = "awt." + o.account.AccountID + ".guessedsession00.guessedsecretguessedsecretguessedsecretguessedsecret"
	}
	if last.status != fasthttp.StatusTooManyRequests || string(last.header.Peek(fasthttp.HeaderRetryAfter)) == "" {
		t.Fatalf("after many guessed sessions: %d", last.status)
	}
}

func TestSitePagesCarryTheSecurityHeaders(t *testing.T) {
	t.Parallel()
	o := newOwnerTest(t)
	c := newSiteClient(o)
	c.mustSignIn()
	var first string
	for _, sp := range o.ownerJSON("GET", "/owner/v1/bookmark-spaces", nil, 200)["spaces"].([]any) {
		first = sp.(map[string]any)["id"].(string)
	}
	for _, path := range []string{"/", "/access", "/settings", "/settings/delete", "/downloads", "/assets/site.css", "/assets/site.js",
		"/portfolio", "/history", "/spaces", "/spaces/" + first, "/spaces/" + first + "/delete", "/activity", "/live?after=0", "/assets/sheet.js"} {
		a := c.do("GET", path, nil)
		if a.status >= 400 {
			t.Errorf("%s: %d", path, a.status)
		}
		csp := string(a.header.Peek("Content-Security-Policy"))
		for _, want := range []string{"script-src 'self'", "frame-ancestors 'none'", "default-src 'none'"} {
			if !strings.Contains(csp, want) {
				t.Errorf("%s: CSP %q lacks %q", path, csp, want)
			}
		}
		if strings.Contains(csp, "unsafe-inline") {
			t.Errorf("%s: CSP allows inline code: %q", path, csp)
		}
		if string(a.header.Peek("X-Content-Type-Options")) != "nosniff" {
			t.Errorf("%s: no nosniff", path)
		}
	}
}

// Hostile names are text on every page that shows them.
func TestSiteEscapesHostileNames(t *testing.T) {
	t.Parallel()
	o := newOwnerTest(t)
	c := newSiteClient(o)
	c.mustSignIn()
	hostile := `"><img src=x onerror=alert(1)><script>alert(1)</script>`
	if a, _ := c.submit("/access", "/access/keys", url.Values{"name": {hostile}, "capability": {"read"}}); a.status != fasthttp.StatusOK {
		t.Fatalf("create: %d %.300s", a.status, a.body)
	}
	for _, path := range []string{"/access"} {
		a := c.do("GET", path, nil)
		if strings.Contains(a.body, "<script>alert") || strings.Contains(a.body, "<img src=x") {
			t.Fatalf("%s renders the name as markup", path)
		}
		if !strings.Contains(a.body, "&lt;script&gt;alert(1)&lt;/script&gt;") {
			t.Fatalf("%s does not show the name as text", path)
		}
	}
}

// Signing out ends the session, not the keys.
func TestSiteSignOutKeepsKeys(t *testing.T) {
	t.Parallel()
	o := newOwnerTest(t)
	c := newSiteClient(o)
	c.mustSignIn()
	created, _ := c.submit("/access", "/access/keys", url.Values{"name": {"bot"}, "capability": {"read"}})
	key := regexp.MustCompile(`value="(awk\.[^"]+)"`).FindStringSubmatch(created.body)
	if key == nil {
		t.Fatalf("the created key is not shown: %.400s", created.body)
	}
	if !strings.Contains(created.body, "curl -sS -H &#39;Authorization: Bearer "+key[1]+"&#39; &#39;http://"+siteTestHost+"/v1/me&#39;") {
		t.Fatalf("the key page has no curl to try it: %.2000s", created.body)
	}
	cookie := c.cookies[sessionCookie]
	out := c.post("/access", "/sign-out", nil)
	if out.status != fasthttp.StatusSeeOther || c.cookies[sessionCookie] != "" {
		t.Fatalf("sign-out: %d, cookie %q", out.status, c.cookies[sessionCookie])
	}
	c.cookies[sessionCookie] = cookie
	if a := c.do("GET", "/access", nil); a.status != fasthttp.StatusSeeOther {
		t.Fatalf("the old cookie still works after sign-out: %d", a.status)
	}
	if status, _, _ := o.send("192.0.2.9", "GET", "/v1/me", key[1], nil); status != 200 {
		t.Fatalf("the key stopped working at sign-out: %d", status)
	}
}

// A password change from the site needs the current password and a
// repeated new one, revokes every key, and keeps this session.
func TestSitePasswordChangeRevokesKeys(t *testing.T) {
	t.Parallel()
	o := newOwnerTest(t)
	c := newSiteClient(o)
	c.mustSignIn()
	if body := c.do("GET", "/settings", nil).body; strings.Count(body, "(there are none now)") != 2 {
		t.Errorf("with no keys, the settings do not say there are none to revoke")
	}
	c.post("/access", "/access/keys", url.Values{"capability": {"write"}})
	if body := c.do("GET", "/settings", nil).body; strings.Count(body, "(the account has 1 now)") != 2 {
		t.Errorf("the password and owner-secret forms do not say beforehand that the account's one key goes")
	}
	c.post("/access", "/access/keys", url.Values{"capability": {"read"}})
	if body := c.do("GET", "/settings", nil).body; strings.Count(body, "(all 2 the account has now)") != 2 {
		t.Errorf("the password and owner-secret forms do not name how many keys they revoke")
	}
	if a := c.post("/settings", "/settings/password", url.Values{"current_password": {o.password}, "new_password": {"a new password"}, "repeat_password": {"another one"}}); a.status != fasthttp.StatusUnprocessableEntity || o.keyCount() != 2 {
		t.Fatalf("mismatched new passwords: %d, keys %d", a.status, o.keyCount())
	}
	if a := c.post("/settings", "/settings/password", url.Values{"current_password": {"wrong password"}, "new_password": {"a new password"}, "repeat_password": {"a new password"}}); a.status != fasthttp.StatusUnauthorized || !strings.Contains(a.body, "current password is wrong") {
		t.Fatalf("wrong current password: %d", a.status)
	}
	a, _ := c.submit("/settings", "/settings/password", url.Values{"current_password": {o.password}, "new_password": {"a new password"}, "repeat_password": {"a new password"}})
	secret := regexp.MustCompile(`value="(aws\.[^"]+)"`).FindStringSubmatch(a.body)
	if a.status != 200 || secret == nil {
		t.Fatalf("password change: %d %.300s", a.status, a.body)
	}
	o.account.OwnerSecret = secret[1]
	if n := o.keyCount(); n != 0 {
		t.Fatalf("%d keys survived the password change", n)
	}
	if a := c.do("GET", "/access", nil); a.status != 200 {
		t.Fatalf("the acting session ended: %d", a.status)
	}
}

// Deleting the account needs the typed phrase and the current password:
// a session left open on a shared machine is not enough.
func TestSiteDeleteNeedsThePhraseAndThePassword(t *testing.T) {
	t.Parallel()
	o := newOwnerTest(t)
	c := newSiteClient(o)
	c.mustSignIn()
	if page := c.do("GET", "/settings/delete", nil); !strings.Contains(page.body, `name="current_password"`) {
		t.Fatalf("the delete form asks for no password: %.2000s", page.body)
	}
	for _, refused := range []struct {
		form   url.Values
		status int
		says   string
	}{
		{url.Values{"confirm": {"yes"}, "current_password": {o.password}}, fasthttp.StatusUnprocessableEntity, "What you typed does not match"},
		{url.Values{"confirm": {o.account.AccountID}}, fasthttp.StatusUnprocessableEntity, "Type your current password"},
		{url.Values{"confirm": {o.account.AccountID}, "current_password": {"not the password"}}, fasthttp.StatusUnauthorized, "The current password is wrong. Nothing was deleted."},
	} {
		if a := c.post("/settings/delete", "/settings/delete", refused.form); a.status != refused.status || !strings.Contains(a.body, refused.says) {
			t.Fatalf("%v: %d %.2000s", refused.form, a.status, a.body)
		}
		if status, _, _ := o.send("192.0.2.1", "GET", "/owner/v1/keys", o.account.OwnerSecret, nil); status != 200 {
			t.Fatalf("the account is gone after %v: %d", refused.form, status)
		}
	}
	if a, _ := c.submit("/settings/delete", "/settings/delete", url.Values{"confirm": {o.account.AccountID}, "current_password": {o.password}}); a.status != 200 || !strings.Contains(a.body, "The account and everything in it are deleted") {
		t.Fatalf("delete: %d", a.status)
	}
	if status, _, _ := o.send("192.0.2.1", "GET", "/owner/v1/keys", o.account.OwnerSecret, nil); status != fasthttp.StatusUnauthorized {
		t.Fatalf("the account survived: %d", status)
	}
}

func TestSiteGrantChangesWhatAnAgentSees(t *testing.T) {
	t.Parallel()
	o := newOwnerTest(t)
	c := newSiteClient(o)
	c.mustSignIn()
	created, _ := c.submit("/access", "/access/keys", url.Values{"capability": {"write"}})
	key := regexp.MustCompile(`value="(awk\.[^"]+)"`).FindStringSubmatch(created.body)[1]
	_, _, me := o.send("192.0.2.9", "GET", "/v1/me", key, nil)
	if spaces := me["accessible_space_ids"].([]any); len(spaces) != 0 {
		t.Fatalf("a new key sees %v", spaces)
	}
	_, _, list := o.send("192.0.2.1", "GET", "/owner/v1/bookmark-spaces", o.account.OwnerSecret, nil)
	space := list["spaces"].([]any)[0].(map[string]any)["id"].(string)
	if a := c.post("/access", "/access/grants/spaces/"+space, url.Values{"level": {"read"}}); a.status != fasthttp.StatusSeeOther {
		t.Fatalf("grant: %d %.300s", a.status, a.body)
	}
	_, _, me = o.send("192.0.2.9", "GET", "/v1/me", key, nil)
	if spaces := me["accessible_space_ids"].([]any); len(spaces) != 1 || spaces[0] != space {
		t.Fatalf("after a read grant the key sees %v", spaces)
	}
	if a := c.post("/access", "/access/grants/spaces/"+space, url.Values{"level": {"admin"}}); a.status != fasthttp.StatusUnprocessableEntity {
		t.Fatalf("a bad level: %d", a.status)
	}
}

// The site's one Login field takes the account's login in any case, or
// its account ID; every wrong combination reads the same.
func TestSiteSignsInByLoginOrAccountID(t *testing.T) {
	t.Parallel()
	o := newOwnerTest(t)
	if status, _, body := o.send("192.0.2.1", "PUT", "/owner/v1/login", o.account.OwnerSecret, map[string]string{"login": "Ada@Example.org", "current_password": o.password}); status != 200 {
		t.Fatalf("set login: %d %v", status, body)
	}
	for _, name := range []string{"ada@example.org", "ADA@EXAMPLE.ORG", o.account.AccountID} {
		c := newSiteClient(o)
		if a := c.signIn(name, o.password); a.status != fasthttp.StatusSeeOther || c.cookies[sessionCookie] == "" {
			t.Fatalf("sign in as %q: %d %.300s", name, a.status, a.body)
		}
		if panel := c.do("GET", "/access", nil); !strings.Contains(panel.body, "Ada@Example.org") {
			t.Fatalf("signed in as %q, the header does not show the login", name)
		}
	}
	problem := regexp.MustCompile(`<p class="problem" role="alert">([^<]*)</p>`)
	var first string
	for _, tc := range [][2]string{{"ada@example.org", "wrong password"}, {"bob@example.org", o.password}, {o.account.AccountID, "wrong password"}, {"not a login!", o.password}} {
		c := newSiteClient(o)
		a := c.signIn(tc[0], tc[1])
		m := problem.FindStringSubmatch(a.body)
		if a.status != fasthttp.StatusUnauthorized || m == nil || c.cookies[sessionCookie] != "" {
			t.Fatalf("sign in as %q: %d %v", tc[0], a.status, m)
		}
		if first == "" {
			first = m[1]
		} else if m[1] != first {
			t.Fatalf("sign in as %q says %q, another wrong sign-in said %q", tc[0], m[1], first)
		}
	}
}
