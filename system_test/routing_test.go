package system_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"
)

// apRoute is one known path and the methods registered on it.
type apRoute struct {
	base    string // "public" or "admin"
	path    string
	methods []string
}

// apKnownRoutes lists the routes this server version registers on the
// public listener (agent and owner API) and on the admin listener.
var apKnownRoutes = []apRoute{
	{"public", "/v1/me", []string{"GET"}},
	{"public", "/v1/portfolio/cards", []string{"GET", "POST"}},
	{"public", "/v1/portfolio/cards/somecardid", []string{"GET", "PATCH", "DELETE"}},
	{"public", "/owner/v1/sessions", []string{"POST"}},
	{"public", "/owner/v1/sessions/current", []string{"DELETE"}},
	{"public", "/owner/v1/keys", []string{"GET", "POST"}},
	{"public", "/owner/v1/keys/somekeyid", []string{"DELETE"}},
	{"public", "/owner/v1/grants/portfolio/somecardid", []string{"PUT"}},
	{"public", "/owner/v1/grants/bookmark-spaces/somespaceid", []string{"PUT"}},
	{"public", "/owner/v1/plan", []string{"PUT"}},
	{"public", "/owner/v1/password", []string{"POST"}},
	{"public", "/owner/v1/owner-secret", []string{"POST"}},
	{"public", "/owner/v1/login", []string{"PUT"}},
	{"public", "/owner/v1/account", []string{"GET", "DELETE"}},
	{"public", "/owner/v1/portfolio/cards", []string{"GET", "POST"}},
	{"public", "/owner/v1/portfolio/cards/somecardid", []string{"GET", "PATCH", "DELETE"}},
	{"admin", "/admin/v1/accounts", []string{"POST"}},
	{"admin", "/admin/v1/cluster", []string{"GET"}},
	{"admin", "/admin/v1/cluster/nodes", []string{"POST"}},
	{"admin", "/admin/v1/cluster/nodes/somenode", []string{"DELETE"}},
	{"admin", "/admin/v1/snapshot", []string{"POST"}},
	{"admin", "/healthz", []string{"GET"}},
	{"admin", "/readyz", []string{"GET"}},
}

// apAllow parses an Allow header into a sorted method list.
func apAllow(h http.Header) []string {
	var out []string
	for _, v := range h.Values("Allow") {
		for _, m := range strings.Split(v, ",") {
			if m = strings.TrimSpace(m); m != "" {
				out = append(out, m)
			}
		}
	}
	slices.Sort(out)
	return out
}

// TestRoutingRules checks the router's answers that are not a route's own:
// OPTIONS with Allow, the 307 for a trailing slash, 404 for an unknown path
// and 405 with Allow for a wrong method, each with the error shape.
func TestRoutingRules(t *testing.T) {
	t.Parallel()
	s := apStartServer(t)
	base := func(r apRoute) string {
		if r.base == "admin" {
			return s.AdminURL
		}
		return s.URL
	}
	e := apSetup(t, s, "base")

	t.Run("options_lists_methods", func(t *testing.T) {
		t.Parallel()
		for _, rt := range apKnownRoutes {
			want := append(slices.Clone(rt.methods), "OPTIONS")
			slices.Sort(want)
			for _, bearer := range []string{"", e.write} {
				r := do(t, "OPTIONS", base(rt)+rt.path, bearer, nil)
				if r.Status != http.StatusNoContent {
					t.Errorf("OPTIONS %s: status %d, want 204; body %s", rt.path, r.Status, r.Body)
					continue
				}
				if len(r.Body) != 0 {
					t.Errorf("OPTIONS %s: 204 with a body %q", rt.path, r.Body)
				}
				if got := apAllow(r.Header); !slices.Equal(got, want) {
					t.Errorf("OPTIONS %s: Allow %v, want %v", rt.path, got, want)
				}
			}
		}
		// The validate path shares its prefix with the card path; it must
		// at least offer POST.
		r := do(t, "OPTIONS", s.URL+"/v1/portfolio/cards/validate", "", nil)
		expect(t, r, http.StatusNoContent, "")
		if got := apAllow(r.Header); !slices.Contains(got, "POST") || !slices.Contains(got, "OPTIONS") {
			t.Errorf("OPTIONS /v1/portfolio/cards/validate: Allow %v lacks POST or OPTIONS", got)
		}
	})

	t.Run("trailing_slash_redirects", func(t *testing.T) {
		t.Parallel()
		for _, rt := range append(slices.Clone(apKnownRoutes), apRoute{"public", "/v1/portfolio/cards/validate", []string{"POST"}}) {
			for _, method := range append(slices.Clone(rt.methods), "OPTIONS") {
				for _, query := range []string{"", "?a=1&b=two%20words"} {
					r := do(t, method, base(rt)+rt.path+"/"+query, e.write, nil)
					if r.Status != http.StatusTemporaryRedirect {
						t.Errorf("%s %s/%s: status %d, want 307; body %s", method, rt.path, query, r.Status, r.Body)
						continue
					}
					if loc := r.Header.Get("Location"); loc != rt.path+query {
						t.Errorf("%s %s/%s: Location %q, want %q", method, rt.path, query, loc, rt.path+query)
					}
				}
			}
		}
		// Several slashes still lead to the path without them.
		r := do(t, "GET", s.URL+"/v1/me//", e.write, nil)
		expect(t, r, http.StatusTemporaryRedirect, "")
		if loc := r.Header.Get("Location"); loc != "/v1/me" {
			t.Errorf("GET /v1/me//: Location %q, want /v1/me", loc)
		}
		// A redirected write changed nothing.
		r = do(t, "POST", s.URL+"/v1/portfolio/cards/", e.write, map[string]any{"address": apAddress("slash")})
		expect(t, r, http.StatusTemporaryRedirect, "")
		if l := apList(t, s, e.write); len(l.ids) != 0 {
			t.Fatalf("a redirected POST created a card: %s", l.raw)
		}
		// Following the redirect reaches the route.
		r = do(t, "GET", s.URL+"/v1/me/?x=1", e.write, nil)
		expect(t, r, http.StatusTemporaryRedirect, "")
		expect(t, do(t, "GET", s.URL+r.Header.Get("Location"), e.write, nil), http.StatusOK, "")
	})

	t.Run("unknown_path_is_404", func(t *testing.T) {
		t.Parallel()
		paths := []string{
			"/nope", "/v1", "/v1/", "/v2/me", "/v1/nope", "/v1/nope/", "/v1/me/extra", "/v1/portfolio",
			"/v1/portfolio/cards/id/extra", "/V1/me", "/owner/v1", "/owner/v1/nope", "/v1/portfolio-cards", "/assets/nope.css",
		}
		for _, p := range paths {
			for _, method := range []string{"GET", "POST", "DELETE", "OPTIONS"} {
				for _, bearer := range []string{"", e.write} {
					r := do(t, method, s.URL+p, bearer, nil)
					apExpect(t, method+" "+p, r, http.StatusNotFound, "NOT_FOUND")
					if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
						t.Errorf("%s %s: Content-Type %q", method, p, ct)
					}
				}
			}
		}
		for _, p := range []string{"/admin/v1/nope", "/v1/me", "/metricsx"} {
			apExpect(t, "admin GET "+p, do(t, "GET", s.AdminURL+p, s.AdminToken, nil), http.StatusNotFound, "NOT_FOUND")
		}
	})

	t.Run("wrong_method_is_405", func(t *testing.T) {
		t.Parallel()
		all := []string{"GET", "POST", "PUT", "PATCH", "DELETE"}
		for _, rt := range apKnownRoutes {
			want := append(slices.Clone(rt.methods), "OPTIONS")
			slices.Sort(want)
			for _, method := range all {
				if slices.Contains(rt.methods, method) {
					continue
				}
				for _, bearer := range []string{"", e.write} {
					r := do(t, method, base(rt)+rt.path, bearer, `{}`)
					apExpect(t, method+" "+rt.path, r, http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED")
					if got := apAllow(r.Header); !slices.Equal(got, want) {
						t.Errorf("%s %s: Allow %v, want %v", method, rt.path, got, want)
					}
				}
			}
		}
		// The refused method never ran: nothing was created or deleted.
		r := do(t, "PUT", s.URL+"/v1/portfolio/cards", e.write, map[string]any{"address": apAddress("put")})
		expect(t, r, http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED")
		if l := apList(t, s, e.write); len(l.ids) != 0 {
			t.Fatalf("a refused method created a card: %s", l.raw)
		}
	})

	// The redirect target is the request's own path without the slash:
	// percent-encoded characters stay encoded, so the target names the same
	// resource and is a valid URI reference.
	t.Run("trailing_slash_redirect_keeps_path_encoding", func(t *testing.T) {
		t.Parallel()
		for _, seg := range []string{"a%3Fb", "a%20b", "a%23b", "a%25b"} {
			// A bare round trip: http.Client would refuse to parse a bad Location.
			req, err := http.NewRequest("GET", s.URL+"/v1/portfolio/cards/"+seg+"/", nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Authorization", "Bearer "+e.write)
			resp, err := http.DefaultTransport.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusTemporaryRedirect {
				t.Errorf("GET /v1/portfolio/cards/%s/: status %d, want 307", seg, resp.StatusCode)
				continue
			}
			loc := resp.Header.Get("Location")
			want := "/v1/portfolio/cards/" + seg
			if !strings.EqualFold(loc, want) {
				t.Errorf("GET /v1/portfolio/cards/%s/: Location %q, want %q (the path without the slash, still encoded)", seg, loc, want)
			}
		}
	})
}
