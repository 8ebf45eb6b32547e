package system_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// The edge tests speak HTTP/1.1 over raw TCP: the requests they send are
// ones no HTTP client library would.

// edgeDeadline bounds every raw exchange. The server's read timeout is 30
// seconds, so an answer that comes only when it runs out fails the test.
const edgeDeadline = 5 * time.Second

// edgeAnswer is one response read off a raw connection.
type edgeAnswer struct {
	Status int
	Header http.Header
	Body   []byte
	Close  bool // the answer said Connection: close
}

// errorCode returns the code of an answer with the error shape
// {"code","error"}, or "" for any other answer.
func (a edgeAnswer) errorCode() string {
	var body map[string]any
	if err := json.Unmarshal(a.Body, &body); err != nil || len(body) != 2 {
		return ""
	}
	code, _ := body["code"].(string)
	if msg, _ := body["error"].(string); msg == "" {
		return ""
	}
	return code
}

func (a edgeAnswer) String() string {
	return fmt.Sprintf("%d Location=%q %.200s", a.Status, a.Header.Get("Location"), a.Body)
}

// edgeExchange sends raw to addr and reads every answer until the server
// closes the connection (closed) or edgeDeadline passes.
func edgeExchange(t testing.TB, addr string, raw []byte) (answers []edgeAnswer, closed bool) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, edgeDeadline)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(edgeDeadline))
	if _, err := conn.Write(raw); err != nil {
		t.Fatalf("send: %v", err)
	}
	return edgeReadAnswers(conn)
}

// edgeReadAnswers reads answers off conn until it closes or its deadline
// passes.
func edgeReadAnswers(conn net.Conn) (answers []edgeAnswer, closed bool) {
	br := bufio.NewReader(conn)
	for {
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			var netErr net.Error
			return answers, !(errors.As(err, &netErr) && netErr.Timeout())
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		answers = append(answers, edgeAnswer{Status: resp.StatusCode, Header: resp.Header, Body: body, Close: resp.Close})
		if err != nil {
			return answers, false
		}
	}
}

func hostOf(url string) string { return strings.TrimPrefix(url, "http://") }

// edgeAttacks are malformed requests, each carrying the bearer in its
// Authorization header, and the status each must get.
func edgeAttacks(host, bearer string) []struct {
	name   string
	raw    string
	status int
} {
	auth := "Authorization: Bearer " + bearer + "\r\n"
	big := strings.Repeat("a", 20<<10)
	return []struct {
		name   string
		raw    string
		status int
	}{
		{"length and chunked", "POST /v1/portfolio/cards HTTP/1.1\r\nHost: " + host + "\r\n" + auth + "Content-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400},
		{"chunked and length", "POST /v1/portfolio/cards HTTP/1.1\r\nHost: " + host + "\r\n" + auth + "Transfer-Encoding: chunked\r\nContent-Length: 4\r\n\r\n0\r\n\r\n", 400},
		{"identity coding", "POST /v1/portfolio/cards HTTP/1.1\r\nHost: " + host + "\r\n" + auth + "Transfer-Encoding: identity\r\nContent-Length: 2\r\n\r\n{}", 400},
		{"gzip coding", "POST /v1/portfolio/cards HTTP/1.1\r\nHost: " + host + "\r\n" + auth + "Transfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n", 400},
		{"chunked in HTTP/1.0", "POST /v1/portfolio/cards HTTP/1.0\r\n" + auth + "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400},
		{"two lengths", "POST /v1/portfolio/cards HTTP/1.1\r\nHost: " + host + "\r\n" + auth + "Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}", 400},
		{"two codings", "POST /v1/portfolio/cards HTTP/1.1\r\nHost: " + host + "\r\n" + auth + "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400},
		{"bad chunk size", "POST /v1/portfolio/cards HTTP/1.1\r\nHost: " + host + "\r\n" + auth + "Transfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n", 400},
		{"chunk size overflow", "POST /v1/portfolio/cards HTTP/1.1\r\nHost: " + host + "\r\n" + auth + "Transfer-Encoding: chunked\r\n\r\nffffffffffffffffff\r\n{}\r\n0\r\n\r\n", 400},
		{"negative length", "POST /v1/portfolio/cards HTTP/1.1\r\nHost: " + host + "\r\n" + auth + "Content-Length: -2\r\n\r\n{}", 400},
		{"long header line", "GET /v1/me HTTP/1.1\r\nHost: " + host + "\r\n" + auth + "X-Big: " + big + "\r\n\r\n", 431},
		{"long request line", "GET /v1/me?q=" + big + " HTTP/1.1\r\nHost: " + host + "\r\n" + auth + "\r\n", 414},
		{"NUL in a header", "GET /v1/me HTTP/1.1\r\nHost: " + host + "\r\n" + auth + "X-Nul: a\x00b\r\n\r\n", 400},
		{"NUL in the path", "GET /v1/m\x00e HTTP/1.1\r\nHost: " + host + "\r\n" + auth + "\r\n", 400},
		{"invalid method", "G@T /v1/me HTTP/1.1\r\nHost: " + host + "\r\n" + auth + "\r\n", 400},
		{"no method", " /v1/me HTTP/1.1\r\nHost: " + host + "\r\n" + auth + "\r\n", 400},
		{"no request target", "GET\r\nHost: " + host + "\r\n" + auth + "\r\n", 400},
		{"HTTP/2.0", "GET /v1/me HTTP/2.0\r\nHost: " + host + "\r\n" + auth + "\r\n", 505},
		{"HTTP/0.9", "GET /v1/me HTTP/0.9\r\nHost: " + host + "\r\n" + auth + "\r\n", 505},
		{"bad version", "GET /v1/me HTTP/1.1x\r\nHost: " + host + "\r\n" + auth + "\r\n", 400},
		{"bare LF", "GET /v1/me HTTP/1.1\nHost: " + host + "\n" + strings.TrimSuffix(auth, "\r\n") + "\n\n", 400},
		{"bare CR", "GET /v1/me HTTP/1.1\r\nHost: " + host + "\r\n" + strings.TrimSuffix(auth, "\r\n") + "\rX: y\r\n\r\n", 400},
		{"no colon", "GET /v1/me HTTP/1.1\r\nHost: " + host + "\r\n" + auth + "NoColonHere\r\n\r\n", 400},
		{"space before colon", "GET /v1/me HTTP/1.1\r\nHost: " + host + "\r\n" + auth + "X-Space : y\r\n\r\n", 400},
		{"two hosts", "GET /v1/me HTTP/1.1\r\nHost: " + host + "\r\nHost: other\r\n" + auth + "\r\n", 400},
		{"no host", "GET /v1/me HTTP/1.1\r\n" + auth + "\r\n", 400},
		// fasthttp quotes the request in these errors even with
		// SecureErrorLogMessage set.
		{"no version", "GET /v1/me\r\nHost: " + host + "\r\n" + auth + "\r\n", 400},
		{"secret in a bad URI", "GET /v1/me?key=" + bearer + "\x01 HTTP/1.1\r\nHost: " + host + "\r\n" + auth + "\r\n", 400},
		{"secret in a bad target", "GET /v1/me?key=" + bearer + " HTTP/9.9\r\nHost: " + host + "\r\n" + auth + "\r\n", 505},
	}
}

// TestEdgeKeepsRequestBytesOutOfTheLog sends every framing attack, each
// with a real key (or the admin token) in Authorization, to both
// listeners of a real server: each gets the error shape, and no line of
// the server's output holds the secret. (fasthttp logged such requests
// whole, Authorization included.)
func TestEdgeKeepsRequestBytesOutOfTheLog(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	a := s.createAccount(t, "base")
	key := s.createKey(t, a, "write")
	for _, l := range []struct{ name, url, secret string }{{"public", s.URL, key}, {"admin", s.AdminURL, s.AdminToken}} {
		for _, attack := range edgeAttacks(hostOf(l.url), l.secret) {
			answers, _ := edgeExchange(t, hostOf(l.url), []byte(attack.raw))
			if len(answers) == 0 {
				t.Errorf("%s listener, %s: no answer within %v", l.name, attack.name, edgeDeadline)
				continue
			}
			if answers[0].Status != attack.status || answers[0].errorCode() == "" {
				t.Errorf("%s listener, %s: %v, want %d with the error shape", l.name, attack.name, answers[0], attack.status)
			}
		}
	}
	// The server logs a line for each connection it could not read, as
	// the connection ends. One more such connection, after all the
	// others: once its line (known by its port) is out, so are theirs.
	conn, err := net.DialTimeout("tcp", hostOf(s.URL), edgeDeadline)
	if err != nil {
		t.Fatal(err)
	}
	conn.SetDeadline(time.Now().Add(edgeDeadline))
	io.WriteString(conn, "G@T / HTTP/1.1\r\nHost: x\r\n\r\n")
	edgeReadAnswers(conn)
	conn.Close()
	last := conn.LocalAddr().String()
	deadline := time.Now().Add(edgeDeadline)
	for !strings.Contains(s.logs.String(), last) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	out := s.logs.String()
	for _, secret := range []string{key, s.AdminToken} {
		if n := strings.Count(out, secret); n > 0 {
			t.Fatalf("the server's output holds a secret from a request %d times:\n%s", n, out)
		}
	}
	if !strings.Contains(out, "error when serving connection") {
		t.Fatalf("the server logged none of the failed connections:\n%s", out)
	}
}

// TestEdgeRefusesAmbiguousFraming checks RFC 9112 section 6.1: a request
// with both Content-Length and Transfer-Encoding is answered 400 and its
// connection closed, so a request smuggled in its body is never answered.
// (It was read as chunked on a kept connection, and the smuggled request
// got its own answer.)
func TestEdgeRefusesAmbiguousFraming(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	a := s.createAccount(t, "base")
	key := s.createKey(t, a, "write")
	smuggled := "GET /v1/me HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + key + "\r\n\r\n"
	for _, head := range []string{
		"Content-Length: 4\r\nTransfer-Encoding: chunked\r\n",
		"Transfer-Encoding: chunked\r\nContent-Length: 4\r\n",
		"Transfer-Encoding: identity\r\nContent-Length: 5\r\n",
	} {
		for _, url := range []string{s.URL, s.AdminURL} {
			raw := "POST /v1/portfolio/cards HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + key + "\r\n" + head + "\r\n0\r\n\r\n" + smuggled
			answers, closed := edgeExchange(t, hostOf(url), []byte(raw))
			if len(answers) != 1 || !closed {
				var statuses []int
				for _, an := range answers {
					statuses = append(statuses, an.Status)
				}
				t.Fatalf("%s, %q: answers %v, connection closed %v; want one 400 and a closed connection", url, head, statuses, closed)
			}
			if answers[0].Status != http.StatusBadRequest || answers[0].errorCode() != "BAD_REQUEST" || !answers[0].Close {
				t.Fatalf("%s, %q: %v, close %v", url, head, answers[0], answers[0].Close)
			}
		}
	}
	// A request with chunked framing alone is still served on a kept
	// connection.
	raw := "POST /v1/portfolio/cards/validate HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + key + "\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n" +
		"2\r\n{}\r\n0\r\n\r\n" + smuggled[:len(smuggled)-2] + "Connection: close\r\n\r\n"
	answers, _ := edgeExchange(t, hostOf(s.URL), []byte(raw))
	if len(answers) != 2 || answers[0].Status != http.StatusUnprocessableEntity || answers[1].Status != http.StatusOK {
		t.Fatalf("chunked request and a second one: %d answers %v", len(answers), answers)
	}
}

// TestEdgeHeadLimits checks the answers to heads the server will not
// read: oversized headers 431, an oversized request line 414, another
// HTTP major version 505, HTTP/1.2 served as HTTP/1.1, and bare-LF line
// endings refused at once rather than after the 30-second read timeout.
// (They were 400, 400, 200, 200 without a Host, and no answer until the
// read timeout.)
func TestEdgeHeadLimits(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	host := hostOf(s.URL)
	big := strings.Repeat("a", 20<<10)
	for _, c := range []struct {
		name, raw string
		status    int
		code      string
	}{
		{"headers over 16 KiB", "GET /v1/docs HTTP/1.1\r\nHost: x\r\nX-Big: " + big + "\r\n\r\n", 431, "REQUEST_HEADER_FIELDS_TOO_LARGE"},
		{"many headers over 16 KiB", "GET /v1/docs HTTP/1.1\r\nHost: x\r\n" + strings.Repeat("X-Many: "+strings.Repeat("b", 100)+"\r\n", 200) + "\r\n", 431, "REQUEST_HEADER_FIELDS_TOO_LARGE"},
		{"request line over 16 KiB", "GET /v1/docs?q=" + big + " HTTP/1.1\r\nHost: x\r\n\r\n", 414, "URI_TOO_LONG"},
		{"HTTP/2.0", "GET /v1/docs HTTP/2.0\r\nHost: x\r\n\r\n", 505, "HTTP_VERSION_NOT_SUPPORTED"},
		{"HTTP/0.9", "GET /v1/docs HTTP/0.9\r\nHost: x\r\n\r\n", 505, "HTTP_VERSION_NOT_SUPPORTED"},
		{"HTTP/2 preface", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 505, "HTTP_VERSION_NOT_SUPPORTED"},
		{"HTTP/1.2 without Host", "GET /v1/docs HTTP/1.2\r\n\r\n", 400, "BAD_REQUEST"},
		{"bare LF", "GET /v1/docs HTTP/1.1\nHost: x\n\n", 400, "BAD_REQUEST"},
		{"bare LF after the request line", "GET /v1/docs HTTP/1.1\r\nHost: x\n\n", 400, "BAD_REQUEST"},
	} {
		answers, closed := edgeExchange(t, host, []byte(c.raw))
		if len(answers) != 1 || !closed {
			t.Errorf("%s: answers %v within %v, closed %v; want one and a closed connection", c.name, answers, edgeDeadline, closed)
			continue
		}
		if answers[0].Status != c.status || answers[0].errorCode() != c.code {
			t.Errorf("%s: %v, want %d %s", c.name, answers[0], c.status, c.code)
		}
	}
	// HTTP/1.2 with a Host is served, as HTTP/1.1.
	answers, _ := edgeExchange(t, host, []byte("GET /v1/docs HTTP/1.2\r\nHost: x\r\nConnection: close\r\n\r\n"))
	if len(answers) != 1 || answers[0].Status != http.StatusOK {
		t.Fatalf("HTTP/1.2 with a Host: %v", answers)
	}
	// Headers just under the limit are served.
	answers, _ = edgeExchange(t, host, []byte("GET /v1/docs HTTP/1.1\r\nHost: x\r\nConnection: close\r\nX-Big: "+strings.Repeat("a", 15<<10)+"\r\n\r\n"))
	if len(answers) != 1 || answers[0].Status != http.StatusOK {
		t.Fatalf("15 KiB of headers: %v", answers)
	}
}

// TestEdgeRedirectsStayOnThisServer checks that the trailing-slash 307
// names a path on this server: a path starting with "//" or holding a
// backslash is 404, and Location is built from the normalised path.
// (GET //evil.example/../v1/docs/ answered 307 Location:
// //evil.example/../v1/docs, which a browser follows to evil.example,
// method and body included.)
func TestEdgeRedirectsStayOnThisServer(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	for _, target := range []string{
		"//evil.example/../v1/docs/",
		"//evil.example/%2e%2e/v1/docs/",
		"//v1/docs/",
		"//v1/docs",
		"/\\evil.example/../v1/docs/",
		"/v1/docs\\",
		"/v1/docs%5C",
		"/v1%5cdocs/",
	} {
		for _, method := range []string{"GET", "POST"} {
			answers, _ := edgeExchange(t, hostOf(s.URL), []byte(method+" "+target+" HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 2\r\n\r\n{}"))
			if len(answers) != 1 || answers[0].Status != http.StatusNotFound || answers[0].errorCode() != "NOT_FOUND" || answers[0].Header.Get("Location") != "" {
				t.Errorf("%s %s: %v, want 404 NOT_FOUND", method, target, answers)
			}
		}
	}
	for target, want := range map[string]string{
		"/v1/docs/":              "/v1/docs",
		"/v1/../v1/docs/":        "/v1/docs",
		"/v1/./docs//?a=1&b=%2F": "/v1/docs?a=1&b=%2F",
		"/v1/docs/sheets/":       "/v1/docs/sheets",
	} {
		answers, _ := edgeExchange(t, hostOf(s.URL), []byte("GET "+target+" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"))
		if len(answers) != 1 || answers[0].Status != http.StatusTemporaryRedirect || answers[0].Header.Get("Location") != want {
			t.Errorf("GET %s: %v, want 307 to %s", target, answers, want)
		}
	}
}

// TestEdgeConnectionCap checks the per-client connection cap of --limits
// spec: with 64 connections open, a 65th is answered 429 RATE_LIMITED and
// closed, and once one closes a new one is served. (Any number was
// served.)
func TestEdgeConnectionCap(t *testing.T) {
	t.Parallel()
	s := startServer(t, "--limits", "spec")
	const capped = 64
	var open []net.Conn
	defer func() {
		for _, c := range open {
			c.Close()
		}
	}()
	for i := range capped {
		c, err := net.DialTimeout("tcp", hostOf(s.URL), edgeDeadline)
		if err != nil {
			t.Fatal(err)
		}
		open = append(open, c)
		// A served request proves the connection was counted.
		c.SetDeadline(time.Now().Add(edgeDeadline))
		fmt.Fprintf(c, "GET /v1/docs HTTP/1.1\r\nHost: x\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("connection %d: %v %v", i+1, resp, err)
		}
		io.Copy(io.Discard, resp.Body)
	}
	over := func() []edgeAnswer {
		answers, closed := edgeExchange(t, hostOf(s.URL), []byte("GET /v1/docs HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"))
		if !closed {
			t.Fatalf("a connection was left open: %v", answers)
		}
		return answers
	}
	answers := over()
	if len(answers) != 1 || answers[0].Status != http.StatusTooManyRequests || answers[0].errorCode() != "RATE_LIMITED" || answers[0].Header.Get("Retry-After") == "" {
		t.Fatalf("connection %d: %v, want 429 RATE_LIMITED with Retry-After", capped+1, answers)
	}
	// The other listener counts its own connections.
	expect(t, do(t, "GET", s.AdminURL+"/healthz", "", nil), http.StatusOK, "")
	// A closed connection frees its place (the server sees the close a
	// moment later).
	open[0].Close()
	open = open[1:]
	deadline := time.Now().Add(edgeDeadline)
	for {
		answers = over()
		if len(answers) == 1 && answers[0].Status == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after a close, a new connection still gets %v", answers)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// edgeRSS returns a process's resident memory in bytes.
func edgeRSS(t *testing.T, s *server) int64 {
	t.Helper()
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.cmd.Process.Pid))
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	for line := range strings.Lines(string(status)) {
		if rest, found := strings.CutPrefix(line, "VmRSS:"); found {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmRSS")
	return 0
}

// edgeUpload sends a restore of size zero bytes with the given
// Authorization and returns the answer and how much of the body had been
// sent when its first byte arrived.
func edgeUpload(t *testing.T, s *server, bearer string, size int64, chunked bool) (edgeAnswer, int64) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", hostOf(s.AdminURL), edgeDeadline)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(4 * edgeDeadline))
	head := "POST /admin/v1/restore HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\n"
	if bearer != "" {
		head += "Authorization: Bearer " + bearer + "\r\n"
	}
	if chunked {
		head += "Transfer-Encoding: chunked\r\n\r\n"
	} else {
		head += "Content-Length: " + strconv.FormatInt(size, 10) + "\r\n\r\n"
	}
	if _, err := io.WriteString(conn, head); err != nil {
		t.Fatal(err)
	}
	var sent, sentAtAnswer atomic.Int64
	sentAtAnswer.Store(-1)
	go func() {
		const piece = 1 << 20
		block := make([]byte, piece)
		if chunked {
			block = append([]byte(fmt.Sprintf("%x\r\n", piece)), append(block, "\r\n"...)...)
		}
		for sent.Load() < size {
			if _, err := conn.Write(block); err != nil {
				return // the server closed the connection
			}
			sent.Add(piece)
		}
		if chunked {
			io.WriteString(conn, "0\r\n\r\n")
		}
	}()
	br := bufio.NewReader(conn)
	if _, err := br.Peek(1); err != nil {
		t.Fatalf("no answer: %v (sent %d of %d bytes)", err, sent.Load(), size)
	}
	sentAtAnswer.Store(sent.Load())
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	return edgeAnswer{Status: resp.StatusCode, Header: resp.Header, Body: body}, sentAtAnswer.Load()
}

// TestEdgeRestoreChecksTheTokenBeforeTheBody sends a 256 MiB upload to
// POST /admin/v1/restore without the token: the 401 comes while the
// client is still sending, and the server's memory does not grow by the
// upload. An authorised upload of the same size goes to disk, not to the
// heap. (The whole body was read into memory before the 401: a 400 MB one
// left the heap at 416 MiB.)
func TestEdgeRestoreChecksTheTokenBeforeTheBody(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	const size = 256 << 20
	for _, c := range []struct {
		name    string
		bearer  string
		chunked bool
	}{
		{"no token", "", false},
		{"wrong token", "not-the-admin-token", false},
		{"no token, chunked", "", true},
	} {
		before := edgeRSS(t, s)
		answer, sent := edgeUpload(t, s, c.bearer, size, c.chunked)
		grown := edgeRSS(t, s) - before
		t.Logf("%s: %d answered after %d KiB of %d MiB sent; RSS grew %d MiB", c.name, answer.Status, sent>>10, size>>20, grown>>20)
		if answer.Status != http.StatusUnauthorized || answer.errorCode() != "UNAUTHORIZED" {
			t.Fatalf("%s: %d %s", c.name, answer.Status, answer.Body)
		}
		if sent >= size {
			t.Fatalf("%s: the 401 came only after the whole body was sent", c.name)
		}
		if grown > size/4 {
			t.Fatalf("%s: the server's memory grew by %d MiB for a %d MiB upload it refused", c.name, grown>>20, size>>20)
		}
	}
	// With the token, the upload is read whole (to a file) and refused
	// for what it is: not a backup.
	for _, chunked := range []bool{false, true} {
		before := edgeRSS(t, s)
		answer, _ := edgeUpload(t, s, s.AdminToken, size, chunked)
		grown := edgeRSS(t, s) - before
		t.Logf("authorised, chunked %v: %d; RSS grew %d MiB", chunked, answer.Status, grown>>20)
		if answer.Status != http.StatusUnprocessableEntity || answer.errorCode() != "VALIDATION" {
			t.Fatalf("authorised upload of zeros, chunked %v: %d %s", chunked, answer.Status, answer.Body)
		}
		if grown > size/4 {
			t.Fatalf("the server's memory grew by %d MiB for a %d MiB upload", grown>>20, size>>20)
		}
	}
	// The upload leaves no file behind in the data directory.
	entries, err := os.ReadDir(s.Dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.Contains(e.Name(), "restore") {
			t.Fatalf("a spool file was left behind: %s", e.Name())
		}
	}
	// The admin API's other bodies are still read: an account is created.
	s.createAccount(t, "base")
}

// TestEdgeRestoreThroughAFollower restores a backup sent chunked to a
// follower, which streams it on to the leader.
func TestEdgeRestoreThroughAFollower(t *testing.T) {
	t.Parallel()
	nodes := startCluster(t, 3)
	leader, followers := leaderAndFollowers(t, nodes)
	follower := followers[0]
	a := leader.createAccount(t, "base")
	key := leader.createKey(t, a, "write")
	backup := do(t, "GET", leader.AdminURL+"/admin/v1/backup", leader.AdminToken, nil)
	expect(t, backup, http.StatusOK, "")
	expect(t, do(t, "DELETE", leader.URL+"/owner/v1/account", a.OwnerSecret, map[string]any{"confirm": true, "current_password": a.Password}), http.StatusNoContent, "")
	expect(t, do(t, "GET", leader.URL+"/v1/me", key, nil), http.StatusUnauthorized, "UNAUTHORIZED")

	// An io.Reader without a length goes out chunked.
	req, err := http.NewRequest("POST", follower.AdminURL+"/admin/v1/restore", io.MultiReader(bytes.NewReader(backup.Body)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+follower.AdminToken)
	resp, err := httpClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("restore through a follower: %d %s", resp.StatusCode, body)
	}
	expect(t, do(t, "GET", leader.URL+"/v1/me", key, nil), http.StatusOK, "")
}

// TestMetricsNeedTheAdminToken checks that /metrics answers only the
// operator token by default, while the health probes stay open, and that
// --open-metrics serves it to anyone. (It was served to anyone.)
func TestMetricsNeedTheAdminToken(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	expect(t, do(t, "GET", s.AdminURL+"/metrics", "", nil), http.StatusUnauthorized, "UNAUTHORIZED")
	expect(t, do(t, "GET", s.AdminURL+"/metrics", "not-the-admin-token", nil), http.StatusUnauthorized, "UNAUTHORIZED")
	expect(t, do(t, "GET", s.AdminURL+"/metrics", s.AdminToken, nil), http.StatusOK, "")
	expect(t, do(t, "GET", s.AdminURL+"/healthz", "", nil), http.StatusOK, "")
	expect(t, do(t, "GET", s.AdminURL+"/readyz", "", nil), http.StatusOK, "")

	open := startServer(t, "--open-metrics")
	r := do(t, "GET", open.AdminURL+"/metrics", "", nil)
	expect(t, r, http.StatusOK, "")
	if !strings.Contains(string(r.Body), "addrwatch_raft_state") {
		t.Fatalf("--open-metrics served %.200s", r.Body)
	}
}
