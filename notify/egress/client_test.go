package egress

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestPostRefusesEachClass sends to an IP literal and to a name of every
// refused block: the request is refused before any connection.
func TestPostRefusesEachClass(t *testing.T) {
	for _, tc := range refusedCases {
		if strings.Contains(tc.addr, "%") {
			continue // a zone cannot be in a URL (target_test.go)
		}
		addr := netip.MustParseAddr(tc.addr)
		literal := addr.String()
		if addr.Is6() && !addr.Is4In6() || strings.Contains(literal, ":") {
			literal = "[" + literal + "]"
		}
		resolver := resolveTo([]netip.Addr{addr})
		c := newClient(t, Config{Resolver: resolver, Dialer: noDialer{t}})
		for _, url := range []string{"http://" + literal + "/hook", "https://hooks.example/hook"} {
			_, err := c.Post(context.Background(), Request{URL: url, Account: "a", Endpoint: url})
			if ClassOfError(err) != ClassRefused {
				t.Errorf("%s as %s (%s): %v, want %s", tc.addr, url, tc.class, err, ClassRefused)
			} else if !strings.Contains(err.Error(), string(tc.class)) {
				t.Errorf("%s: the error does not name the class %q: %v", tc.addr, tc.class, err)
			}
		}
	}
}

// TestPostRefusesAMixedAnswer: one refused address among public ones
// refuses the request; the dialer would otherwise be free to pick it.
func TestPostRefusesAMixedAnswer(t *testing.T) {
	resolver := resolveTo([]netip.Addr{publicAddr, netip.MustParseAddr("10.0.0.7")})
	c := newClient(t, Config{Resolver: resolver, Dialer: noDialer{t}})
	_, err := c.Post(context.Background(), Request{URL: "https://hooks.example/", Account: "a", Endpoint: "e"})
	if ClassOfError(err) != ClassRefused {
		t.Fatalf("%v, want %s", err, ClassRefused)
	}
}

// TestPostDialsTheCheckedAnswer: a name whose DNS answer turns to loopback
// after the check (rebinding) cannot reach it: the one lookup's answer is
// the one dialed, and no second lookup happens within a request.
func TestPostDialsTheCheckedAnswer(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	port := portOf(t, srv.Listener.Addr().String())
	resolver := resolveTo([]netip.Addr{publicAddr}, []netip.Addr{netip.MustParseAddr("127.0.0.1")})
	dialer := &loopbackDialer{server: srv.Listener.Addr().String()}
	c := newClient(t, Config{Resolver: resolver, Dialer: dialer})
	url := "http://rebind.example:" + port + "/hook"

	answer, err := c.Post(context.Background(), Request{URL: url, Account: "a", Endpoint: "e"})
	if err != nil || answer.Status != http.StatusNoContent {
		t.Fatalf("first post: %+v, %v", answer, err)
	}
	if n := resolver.count(); n != 1 {
		t.Fatalf("%d lookups for one request, want 1", n)
	}
	if got, want := dialer.dials(), []string{publicAddr.String() + ":" + port}; len(got) != 1 || got[0] != want[0] {
		t.Fatalf("dialed %v, want %v", got, want)
	}
	// The answer has turned to loopback: the next request is refused,
	// although a kept connection to the checked address is still open.
	_, err = c.Post(context.Background(), Request{URL: url, Account: "a", Endpoint: "e"})
	if ClassOfError(err) != ClassRefused {
		t.Fatalf("second post after the answer turned to 127.0.0.1: %v, want %s", err, ClassRefused)
	}
	if hits.Load() != 1 || len(dialer.dials()) != 1 {
		t.Fatalf("the receiver saw %d requests and %d dials, want 1 and 1", hits.Load(), len(dialer.dials()))
	}
}

// TestPostFollowsNoRedirect: a receiver that answers 302 to loopback gets
// its answer recorded, and loopback is never asked, even where private
// targets are allowed.
func TestPostFollowsNoRedirect(t *testing.T) {
	var inside atomic.Int32
	internal := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { inside.Add(1) }))
	defer internal.Close()
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, internal.URL+"/latest/meta-data/", http.StatusFound)
	}))
	defer redirector.Close()
	for _, allowPrivate := range []bool{false, true} {
		c := newClient(t, Config{
			AllowPrivate: allowPrivate,
			Resolver:     resolveTo([]netip.Addr{publicAddr}),
			Dialer:       &loopbackDialer{server: redirector.Listener.Addr().String()},
		})
		answer, err := c.Post(context.Background(), Request{URL: "http://hooks.example/", Account: "a", Endpoint: "e"})
		if err != nil || answer.Status != http.StatusFound {
			t.Fatalf("allowPrivate %v: %+v, %v; want the 302 as the answer", allowPrivate, answer, err)
		}
	}
	if n := inside.Load(); n != 0 {
		t.Fatalf("the redirect's target was asked %d times", n)
	}
}

func TestPostConnectTimeout(t *testing.T) {
	c := newClient(t, Config{
		Resolver:       resolveTo([]netip.Addr{publicAddr}),
		Dialer:         blockingDialer{},
		ConnectTimeout: 50 * time.Millisecond,
		TotalTimeout:   10 * time.Second,
	})
	start := time.Now()
	_, err := c.Post(context.Background(), Request{URL: "http://hooks.example/", Account: "a", Endpoint: "e"})
	if ClassOfError(err) != ClassTimeout {
		t.Fatalf("%v, want %s", err, ClassTimeout)
	}
	// Well under the total timeout: the connect timeout ended it.
	if elapsed := time.Since(start); elapsed > 5*time.Second {
		t.Fatalf("the connect timeout of 50ms took %s", elapsed)
	}
}

// TestPostTotalTimeout: a receiver that connects but never answers, or
// answers headers and then stalls, is cut off by the total timeout.
func TestPostTotalTimeout(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	silent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer silent.Close()
	c := newClient(t, Config{
		Resolver:     resolveTo([]netip.Addr{publicAddr}),
		Dialer:       &loopbackDialer{server: silent.Listener.Addr().String()},
		TotalTimeout: 100 * time.Millisecond,
	})
	start := time.Now()
	_, err := c.Post(context.Background(), Request{URL: "http://hooks.example/", Account: "a", Endpoint: "e"})
	if ClassOfError(err) != ClassTimeout {
		t.Fatalf("%v, want %s", err, ClassTimeout)
	}
	if elapsed := time.Since(start); elapsed > 5*time.Second {
		t.Fatalf("the total timeout of 100ms took %s", elapsed)
	}
}

func TestPostStalledBodyKeepsTheStatus(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	stalls := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusAccepted)
		io.WriteString(w, "partial")
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer stalls.Close()
	c := newClient(t, Config{
		Resolver:     resolveTo([]netip.Addr{publicAddr}),
		Dialer:       &loopbackDialer{server: stalls.Listener.Addr().String()},
		TotalTimeout: 100 * time.Millisecond,
	})
	answer, err := c.Post(context.Background(), Request{URL: "http://hooks.example/", Account: "a", Endpoint: "e"})
	if err != nil || answer.Status != http.StatusAccepted || string(answer.Body) != "partial" {
		t.Fatalf("%+v, %v; want 202 with the part of the body that came", answer, err)
	}
}

func TestPostAnswerCap(t *testing.T) {
	big := strings.Repeat("x", 1<<20)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/small" {
			w.Header().Set("Retry-After", "7")
			io.WriteString(w, "ok")
			return
		}
		w.WriteHeader(http.StatusBadGateway)
		io.WriteString(w, big)
	}))
	defer srv.Close()
	c := newClient(t, Config{Resolver: resolveTo([]netip.Addr{publicAddr}), Dialer: &loopbackDialer{server: srv.Listener.Addr().String()}})
	answer, err := c.Post(context.Background(), Request{URL: "http://hooks.example/big", Account: "a", Endpoint: "e"})
	if err != nil || answer.Status != http.StatusBadGateway {
		t.Fatalf("%v, %v", answer.Status, err)
	}
	if len(answer.Body) != AnswerBytesDefault || !answer.Truncated {
		t.Fatalf("kept %d bytes (truncated %v), want %d and truncated", len(answer.Body), answer.Truncated, AnswerBytesDefault)
	}
	answer, err = c.Post(context.Background(), Request{URL: "http://hooks.example/small", Account: "a", Endpoint: "e"})
	if err != nil || string(answer.Body) != "ok" || answer.Truncated {
		t.Fatalf("small answer: %q truncated %v, %v", answer.Body, answer.Truncated, err)
	}
	if got := answer.Header.Get("Retry-After"); got != "7" {
		t.Fatalf("the answer's Retry-After header is %q, want 7", got)
	}
}

// TestPostAllowPrivateReachesLoopback: the operator's --notify-allow-private
// opens loopback, through the real resolver and dialer; without it the
// server is never reached.
func TestPostAllowPrivateReachesLoopback(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		body, _ := io.ReadAll(r.Body)
		if r.Method != http.MethodPost || string(body) != `{"n":1}` || r.Header.Get("X-Test") != "yes" {
			w.WriteHeader(http.StatusBadRequest)
		}
	}))
	defer srv.Close()
	req := Request{URL: srv.URL + "/hook", Account: "a", Endpoint: "e", Header: http.Header{"X-Test": {"yes"}}, Body: []byte(`{"n":1}`)}

	_, err := newClient(t, Config{}).Post(context.Background(), req)
	if ClassOfError(err) != ClassRefused || hits.Load() != 0 {
		t.Fatalf("without AllowPrivate: %v, %d hits; want refused and none", err, hits.Load())
	}
	answer, err := newClient(t, Config{AllowPrivate: true}).Post(context.Background(), req)
	if err != nil || answer.Status != http.StatusOK || hits.Load() != 1 {
		t.Fatalf("with AllowPrivate: %+v, %v, %d hits", answer, err, hits.Load())
	}
	// A name resolved by the system resolver too.
	req.URL = strings.Replace(srv.URL, "127.0.0.1", "localhost", 1) + "/hook"
	answer, err = newClient(t, Config{AllowPrivate: true}).Post(context.Background(), req)
	if err != nil || answer.Status != http.StatusOK {
		t.Fatalf("localhost with AllowPrivate: %+v, %v", answer, err)
	}
}

// TestPostTLSChecksTheURLHost: the connection goes to the checked IP, but
// the certificate must name the URL's host.
func TestPostTLSChecksTheURLHost(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	roots := x509.NewCertPool()
	roots.AddCert(srv.Certificate())
	port := portOf(t, srv.Listener.Addr().String())
	c := newClient(t, Config{
		Resolver: resolveTo([]netip.Addr{publicAddr}),
		Dialer:   &loopbackDialer{server: srv.Listener.Addr().String()},
		TLS:      &tls.Config{RootCAs: roots},
	})
	// httptest's certificate names example.com.
	answer, err := c.Post(context.Background(), Request{URL: "https://example.com:" + port + "/", Account: "a", Endpoint: "e"})
	if err != nil || answer.Status != http.StatusOK {
		t.Fatalf("example.com: %+v, %v", answer, err)
	}
	_, err = c.Post(context.Background(), Request{URL: "https://other.example:" + port + "/", Account: "a", Endpoint: "e2"})
	var certErr *tls.CertificateVerificationError
	if ClassOfError(err) != ClassConnection || !errors.As(err, &certErr) {
		t.Fatalf("a certificate for example.com accepted for other.example: %v", err)
	}
}

// TestPostIgnoresProxyEnvironment: HTTPS_PROXY and HTTP_PROXY are never
// used; the connection goes to the checked address.
func TestPostIgnoresProxyEnvironment(t *testing.T) {
	var proxied atomic.Int32
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { proxied.Add(1) }))
	defer proxy.Close()
	t.Setenv("HTTP_PROXY", proxy.URL)
	t.Setenv("HTTPS_PROXY", proxy.URL)
	t.Setenv("NO_PROXY", "")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	port := portOf(t, srv.Listener.Addr().String())
	dialer := &loopbackDialer{server: srv.Listener.Addr().String()}
	c := newClient(t, Config{Resolver: resolveTo([]netip.Addr{publicAddr}), Dialer: dialer})
	answer, err := c.Post(context.Background(), Request{URL: "http://hooks.example:" + port + "/", Account: "a", Endpoint: "e"})
	if err != nil || answer.Status != http.StatusOK || proxied.Load() != 0 {
		t.Fatalf("%+v, %v, proxy asked %d times", answer, err, proxied.Load())
	}
	if d := dialer.dials(); len(d) != 1 || d[0] != publicAddr.String()+":"+port {
		t.Fatalf("dialed %v", d)
	}
}

func TestPostRateLimited(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	resolver := resolveTo([]netip.Addr{publicAddr})
	clk := &clock{t: time.Unix(1_700_000_000, 0)}
	c := newClient(t, Config{
		Resolver:     resolver,
		Dialer:       &loopbackDialer{server: srv.Listener.Addr().String()},
		EndpointRate: Rate{PerSecond: 1, Burst: 1},
		Now:          clk.now,
	})
	req := Request{URL: "http://hooks.example/", Account: "a", Endpoint: "e"}
	if _, err := c.Post(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	_, err := c.Post(context.Background(), req)
	var e *Error
	if !errors.As(err, &e) || e.Class != ClassRateLimited || e.RetryAfter != time.Second {
		t.Fatalf("%v, want %s with RetryAfter 1s", err, ClassRateLimited)
	}
	if resolver.count() != 1 {
		t.Fatalf("a rate-limited request was looked up (%d lookups)", resolver.count())
	}
	clk.advance(e.RetryAfter)
	if _, err := c.Post(context.Background(), req); err != nil {
		t.Fatalf("after RetryAfter: %v", err)
	}
}

// TestErrorsKeepSecretsOut: whatever fails, the error names the target by
// its origin only; the path and query, which may hold a token, never
// appear.
func TestErrorsKeepSecretsOut(t *testing.T) {
	const secret = "s3cretT0ken"
	closed := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	closedAddr := closed.Listener.Addr().String()
	closed.Close()
	cases := map[string]struct {
		cfg Config
		url string
	}{
		"invalid":     {Config{}, "ftp://hooks.example/" + secret + "?token=" + secret},
		"userinfo":    {Config{}, "https://u:" + secret + "@hooks.example/?token=" + secret},
		"refused":     {Config{Resolver: resolveTo([]netip.Addr{netip.MustParseAddr("10.1.1.1")})}, "https://hooks.example/" + secret + "?token=" + secret},
		"timeout":     {Config{Resolver: resolveTo([]netip.Addr{publicAddr}), Dialer: blockingDialer{}, ConnectTimeout: 20 * time.Millisecond}, "http://hooks.example/" + secret + "?token=" + secret},
		"unreachable": {Config{Resolver: resolveTo([]netip.Addr{publicAddr}), Dialer: &loopbackDialer{server: closedAddr}}, "http://hooks.example/" + secret + "?token=" + secret},
		"rate":        {Config{Resolver: resolveTo([]netip.Addr{netip.MustParseAddr("10.1.1.1")}), EndpointRate: Rate{PerSecond: 0.001, Burst: 1}}, "https://hooks.example/" + secret + "?token=" + secret},
	}
	for name, tc := range cases {
		c := newClient(t, tc.cfg)
		var err error
		for range 2 { // twice, so that "rate" runs out
			_, err = c.Post(context.Background(), Request{URL: tc.url, Account: "a", Endpoint: "e"})
		}
		if err == nil {
			t.Errorf("%s: no error", name)
			continue
		}
		if strings.Contains(err.Error(), secret) {
			t.Errorf("%s: the error repeats the secret: %v", name, err)
		}
		if !strings.Contains(err.Error(), "hooks.example") {
			t.Errorf("%s: the error does not name the host: %v", name, err)
		}
	}
}
