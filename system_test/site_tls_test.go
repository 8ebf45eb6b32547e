package system_test

import (
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

// Over HTTPS (--tls-cert) the site's cookies are Secure and take the
// __Host- prefix, which a browser accepts only from a secure origin with
// Path=/ and no Domain; a form from the plain-HTTP origin of the same host
// is refused, a session cookie without the prefix is not read, and the
// answers carry HSTS.
func TestSiteCookiesAreSecureOverHTTPS(t *testing.T) {
	t.Parallel()
	certPath, keyPath, cert := selfSignedCert(t, t.TempDir(), "site")
	s := startServer(t, "--tls-cert", certPath, "--tls-key", keyPath)
	a := s.createAccount(t, "base")
	base := "https://" + s.httpAddr
	client := httpsClient(cert)
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

	get, err := client.Get(base + "/")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(get.Body)
	get.Body.Close()
	var signIn *http.Cookie
	for _, c := range get.Cookies() {
		if c.Name == "__Host-addrwatch_signin" {
			signIn = c
		}
	}
	if signIn == nil || !signIn.Secure || !signIn.HttpOnly || signIn.SameSite != http.SameSiteStrictMode || signIn.Path != "/" {
		t.Fatalf("sign-in cookie over HTTPS: %+v (all: %v)", signIn, get.Cookies())
	}
	token := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindSubmatch(page)
	if token == nil || string(token[1]) != signIn.Value {
		t.Fatalf("the sign-in form's token does not match its cookie")
	}
	post := func(origin string) *http.Response {
		form := url.Values{"csrf": {signIn.Value}, "login": {a.ID}, "password": {a.Password}}
		req, _ := http.NewRequest("POST", base+"/sign-in", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", origin)
		req.AddCookie(signIn)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	if resp := post("http://" + s.httpAddr); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("a sign-in form from the plain-HTTP origin: %d", resp.StatusCode)
	}
	resp := post(base)
	var session *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == "__Host-addrwatch_session" {
			session = c
		}
	}
	if resp.StatusCode != http.StatusSeeOther || session == nil || !session.Secure || !session.HttpOnly || session.SameSite != http.SameSiteStrictMode || session.Path != "/" || session.Domain != "" {
		t.Fatalf("sign-in over HTTPS: %d, session cookie %+v", resp.StatusCode, session)
	}
	req, _ := http.NewRequest("GET", base+"/access", nil)
	req.AddCookie(session)
	panel, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(panel.Body)
	panel.Body.Close()
	if panel.StatusCode != http.StatusOK || !strings.Contains(string(body), "API keys") {
		t.Fatalf("the panel over HTTPS: %d", panel.StatusCode)
	}
	if hsts := panel.Header.Get("Strict-Transport-Security"); hsts != "max-age=31536000" {
		t.Fatalf("the panel over HTTPS has Strict-Transport-Security %q", hsts)
	}

	// The same session under the plain name, as a network attacker or a
	// sibling host could plant it, signs nobody in over HTTPS.
	req, _ = http.NewRequest("GET", base+"/access", nil)
	req.AddCookie(&http.Cookie{Name: "addrwatch_session", Value: session.Value})
	planted, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	planted.Body.Close()
	if planted.StatusCode != http.StatusSeeOther {
		t.Fatalf("the panel over HTTPS with a plain addrwatch_session cookie: %d, want 303 to the sign-in page", planted.StatusCode)
	}
}
