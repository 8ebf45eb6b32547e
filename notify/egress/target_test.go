package egress

import (
	"net"
	"strings"
	"testing"
)

func TestParseTargetRefuses(t *testing.T) {
	for _, raw := range []string{
		"",
		"ftp://hooks.example/x",
		"file:///etc/passwd",
		"gopher://hooks.example/",
		"javascript:alert(1)",
		"http:hooks.example",
		"http:///path",
		"https://user:pw@hooks.example/x",
		"https://user@hooks.example/x",
		"https://@hooks.example/x",
		"http://[fe80::1%25eth0]/",
		"http://2130706433/",
		"http://0x7f.1/",
		"http://127.1/",
		"http://017700000001/",
		"http://hooks.example:0/",
		"http://hooks.example:65536/",
		"http://hooks.example:-1/",
		"http://hooks.example:http/",
		"http://exa mple.com/",
		"http://" + strings.Repeat("a", urlBytesMax) + ".example/",
	} {
		target, err := ParseTarget(raw)
		if err == nil {
			t.Errorf("ParseTarget(%q) = %s, want an error", raw, target)
			continue
		}
		if ClassOfError(err) != ClassInvalid {
			t.Errorf("ParseTarget(%q): class %q, want %q", raw, ClassOfError(err), ClassInvalid)
		}
	}
}

func TestParseTargetAccepts(t *testing.T) {
	for _, tc := range []struct{ raw, url, hostPort, redacted string }{
		{"https://hooks.example/in?token=s3cret", "https://hooks.example/in?token=s3cret", "hooks.example:443", "https://hooks.example/…"},
		{"HTTP://Hooks.Example:8080", "http://hooks.example:8080", "hooks.example:8080", "http://hooks.example:8080"},
		{"https://bücher.example/", "https://xn--bcher-kva.example/", "xn--bcher-kva.example:443", "https://xn--bcher-kva.example"},
		{"http://93.184.215.14/x#frag", "http://93.184.215.14/x", "93.184.215.14:80", "http://93.184.215.14/…"},
		{"http://[2606:4700::1111]:8443/", "http://[2606:4700::1111]:8443/", "[2606:4700::1111]:8443", "http://[2606:4700::1111]:8443"},
		{"http://[2606:4700:0:0::1111]/", "http://[2606:4700::1111]/", "[2606:4700::1111]:80", "http://[2606:4700::1111]"},
		{"https://ntfy.example/my-secret-topic", "https://ntfy.example/my-secret-topic", "ntfy.example:443", "https://ntfy.example/…"},
	} {
		target, err := ParseTarget(tc.raw)
		if err != nil {
			t.Errorf("ParseTarget(%q): %v", tc.raw, err)
			continue
		}
		if got := target.URL().String(); got != tc.url {
			t.Errorf("ParseTarget(%q).URL() = %q, want %q", tc.raw, got, tc.url)
		}
		if got := target.hostPort(); got != tc.hostPort {
			t.Errorf("ParseTarget(%q).hostPort() = %q, want %q", tc.raw, got, tc.hostPort)
		}
		if got := target.String(); got != tc.redacted {
			t.Errorf("ParseTarget(%q).String() = %q, want %q", tc.raw, got, tc.redacted)
		}
	}
}

func TestRedact(t *testing.T) {
	for raw, want := range map[string]string{
		"https://hooks.example/a/b?token=s3cret": "https://hooks.example/…",
		"https://user:pw@hooks.example/":         "https://hooks.example",
		"https://hooks.example":                  "https://hooks.example",
		"https://hooks.example/":                 "https://hooks.example",
		"https://hooks.example?t=1":              "https://hooks.example/…",
		"::not a url":                            "(a URL that does not parse)",
		"/relative?token=s3cret":                 "(a URL that does not parse)",
	} {
		if got := Redact(raw); got != want {
			t.Errorf("Redact(%q) = %q, want %q", raw, got, want)
		}
	}
}

// FuzzParseTarget holds every accepted URL to what the rest of the package
// relies on: http or https, no user information, a host the transport
// will dial by the very name that was checked, and a redacted form that
// keeps neither path nor query.
func FuzzParseTarget(f *testing.F) {
	for _, s := range []string{
		"https://hooks.example/in?token=s3cret", "http://[::1]:80/", "http://127.0.0.1/",
		"https://user:pw@hooks.example/", "http://bücher.example/", "http://[fe80::1%25en0]/",
		"http://0x7f.1/", "HTTP://A.B:1/c?d#e", "https://hooks.example:443/%2e%2e/",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		target, err := ParseTarget(raw)
		if err != nil {
			if ClassOfError(err) != ClassInvalid {
				t.Fatalf("error of class %q: %v", ClassOfError(err), err)
			}
			return
		}
		u := target.URL()
		if u.Scheme != "http" && u.Scheme != "https" {
			t.Fatalf("scheme %q accepted", u.Scheme)
		}
		if u.User != nil {
			t.Fatalf("user information accepted in %q", raw)
		}
		if target.host == "" || u.Hostname() != target.host || strings.Contains(target.host, "%") {
			t.Fatalf("host %q, URL host %q", target.host, u.Hostname())
		}
		host, port, err := net.SplitHostPort(target.hostPort())
		if err != nil || host != target.host || port == "" {
			t.Fatalf("hostPort %q: %v", target.hostPort(), err)
		}
		// The redacted form is the origin, and at most a mark that
		// something followed it.
		origin := u.Scheme + "://" + u.Host
		if redacted := target.String(); redacted != origin && redacted != origin+"/…" {
			t.Fatalf("String() = %q keeps more than the origin %q", redacted, origin)
		}
		again, err := ParseTarget(u.String())
		if err != nil || again.hostPort() != target.hostPort() || again.URL().String() != u.String() {
			t.Fatalf("the accepted form %q does not parse to itself: %v", u.String(), err)
		}
	})
}
