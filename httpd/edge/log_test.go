package edge

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"
)

func TestFasthttpLogLinesHoldNoRequestBytes(t *testing.T) {
	const secret = "awk.k1.SECRETSECRETSECRET"
	var out bytes.Buffer
	log := NewLogger(slog.New(slog.NewTextHandler(&out, nil)), "test")
	local := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}
	remote := &net.TCPAddr{IP: net.IPv4(192, 0, 2, 7), Port: 50000}
	// The errors fasthttp formats with the request in them, as it does
	// with and without SecureErrorLogMessage.
	leaky := []error{
		fmt.Errorf("error when reading request headers: %w: buffer size=80, contents: %q", fasthttp.ErrUnsupportedRequestMethod, "G@T / HTTP/1.1\r\nAuthorization: Bearer "+secret),
		fmt.Errorf("cannot find whitespace in the first line of request %q", "GET\r\nAuthorization: Bearer "+secret),
		fmt.Errorf("unsupported http version %q", secret),
		fmt.Errorf("invalid header value %q", "Bearer "+secret),
		&fasthttp.ErrSmallBuffer{},
		fmt.Errorf("reading: %w", errBareLineEnding),
	}
	for _, err := range leaky {
		log.Printf("error when serving connection %q<->%q: %v", local, remote, err)
	}
	// fasthttp's RequestCtx logger writes the request itself.
	log.Printf("%.3f %s - %s", 0.5, "GET /v1/me?key="+secret, "message")

	got := out.String()
	if strings.Contains(got, secret) {
		t.Fatalf("a log line holds the request's secret:\n%s", got)
	}
	for _, want := range []string{"192.0.2.7:50000", "unsupported http request method", "request head too large", "bare LF", "level=INFO", "listener=test"} {
		if !strings.Contains(got, want) {
			t.Errorf("the log lacks %q:\n%s", want, got)
		}
	}
	// A socket error carries no request bytes and is worth its text.
	out.Reset()
	log.Printf("Permanent error when accepting new connections: %v", &net.OpError{Op: "accept", Net: "tcp", Err: errors.New("too many open files")})
	if !strings.Contains(out.String(), "too many open files") || !strings.Contains(out.String(), "level=WARN") {
		t.Errorf("an accept error lost its text or level: %s", out.String())
	}
}
