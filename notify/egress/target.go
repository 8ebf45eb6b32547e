package egress

import (
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/idna"
)

// urlBytesMax bounds an owner's URL: a webhook or topic URL longer than
// this is a mistake or an attack on something that stores it.
const urlBytesMax = 2048

// Target is an owner's URL that passed the syntax checks: http or https,
// a host, no user name or password. Its host is in ASCII (IDNA) form, the
// form the resolver is asked and the TLS certificate must name.
type Target struct {
	url  *url.URL
	host string // a DNS name or an IP literal, without brackets
	port string // the URL's port, or its scheme's default
}

// ParseTarget checks raw as the URL of an outbound request. Its errors
// never repeat raw, whose path or query may be a secret (an ntfy topic, a
// token).
func ParseTarget(raw string) (Target, error) {
	if len(raw) > urlBytesMax {
		return Target{}, invalid("the URL is longer than " + strconv.Itoa(urlBytesMax) + " bytes")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return Target{}, invalid("the URL does not parse")
	}
	u.Scheme = strings.ToLower(u.Scheme)
	if u.Scheme != "http" && u.Scheme != "https" {
		return Target{}, invalid("the URL must start with http:// or https://")
	}
	if u.Opaque != "" || u.Host == "" {
		return Target{}, invalid("the URL has no host")
	}
	if u.User != nil {
		// A password in a URL ends up in logs and in the Referer of
		// whatever it reaches; receivers take tokens in the path, query
		// or a header instead.
		return Target{}, invalid("the URL must not carry a user name or password")
	}
	host, err := asciiHost(u.Hostname())
	if err != nil {
		return Target{}, err
	}
	explicitPort := u.Port()
	port := explicitPort
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	} else if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return Target{}, invalid("the URL's port must be from 1 to 65535")
	}
	// The request goes out with the ASCII host, so that the Host header,
	// the TLS server name and the name resolved are one and the same.
	u.Host = host
	if strings.Contains(host, ":") {
		u.Host = "[" + host + "]"
	}
	if explicitPort != "" {
		u.Host += ":" + explicitPort
	}
	u.Fragment, u.RawFragment = "", ""
	if len(u.String()) > urlBytesMax {
		// Escaping can lengthen a URL threefold; the bound holds for
		// the form that is sent and stored.
		return Target{}, invalid("the URL is longer than " + strconv.Itoa(urlBytesMax) + " bytes")
	}
	return Target{url: u, host: host, port: port}, nil
}

// asciiHost checks a URL's host and returns it in the form resolvers and
// certificates use: an IP literal as it is, a name lower-cased and in
// IDNA (punycode) form.
func asciiHost(host string) (string, error) {
	if strings.Contains(host, "%") {
		// A zone (fe80::1%eth0) picks this machine's interface: never
		// an owner's choice.
		return "", invalid("the URL's host must not name a network interface")
	}
	if addr, err := netip.ParseAddr(host); err == nil {
		return addr.String(), nil
	}
	name, err := idna.Lookup.ToASCII(host)
	if err != nil || name == "" || !utf8.ValidString(host) {
		return "", invalid("the URL's host is not a valid name")
	}
	if again, err := idna.Lookup.ToASCII(name); err != nil || again != name {
		// The ASCII form must stand on its own: it is what the request
		// carries, and what a later parse of the URL meets.
		return "", invalid("the URL's host is not a valid name")
	}
	labels := strings.Split(strings.TrimSuffix(name, "."), ".")
	if numericLabel(labels[len(labels)-1]) {
		// 2130706433, 0x7f.1 or 127.1: not names but IPv4 addresses
		// in the forms inet_aton accepts, which some resolvers would
		// hand back as 127.0.0.1. No top-level domain is numeric.
		return "", invalid("the URL's host is neither a name nor an IP address in the usual form")
	}
	return name, nil
}

// numericLabel says whether label is a number as inet_aton reads one:
// decimal, octal (leading 0) or hex (0x...).
func numericLabel(label string) bool {
	if label == "" {
		return false
	}
	digits := strings.TrimPrefix(strings.TrimPrefix(label, "0x"), "0X")
	if digits == "" {
		return true
	}
	for _, c := range digits {
		if !strings.ContainsRune("0123456789abcdefABCDEF", c) {
			return false
		}
	}
	hex := digits != label
	for _, c := range digits {
		if c > '9' && !hex {
			return false
		}
	}
	return true
}

// String is the URL without anything that may be a secret: the scheme,
// host and port, and "/…" where it had a path or a query.
func (t Target) String() string { return redact(t.url) }

// URL is a copy of the target's URL, for the request.
func (t Target) URL() *url.URL {
	u := *t.url
	return &u
}

// Redact is raw without its path and query (see Target.String), for a log
// line or an error about a URL that may not even parse.
func Redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "(a URL that does not parse)"
	}
	return redact(u)
}

func redact(u *url.URL) string {
	s := u.Scheme + "://" + u.Host
	if (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Opaque != "" {
		s += "/…"
	}
	return s
}

// hostPort is where the request goes, as the HTTP transport names it when
// it dials: the check of a dial compares with it.
func (t Target) hostPort() string { return net.JoinHostPort(t.host, t.port) }
