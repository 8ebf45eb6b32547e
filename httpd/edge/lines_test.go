package edge

import (
	"strings"
	"testing"
)

// feedAll feeds the chunks in turn and returns the bytes let through
// before the first refusal, and whether there was one.
func feedAll(l *lineCheck, chunks ...string) (passed string, refused bool) {
	for _, c := range chunks {
		good, ok := l.feed([]byte(c))
		passed += c[:good]
		if !ok {
			return passed, true
		}
	}
	return passed, false
}

func TestLineCheckRefusesBareLineEndings(t *testing.T) {
	cases := []struct {
		name   string
		chunks []string
		passed string // "" when not refused
	}{
		{"bare LF head", []string{"GET / HTTP/1.1\nHost: x\n\n"}, "GET / HTTP/1.1"},
		{"CRLF line, LF blank line", []string{"GET / HTTP/1.1\r\nHost: x\r\n\n"}, "GET / HTTP/1.1\r\nHost: x\r\n"},
		{"bare LF inside", []string{"GET / HTTP/1.1\r\nHost: x\nX: y\r\n\r\n"}, "GET / HTTP/1.1\r\nHost: x"},
		{"bare CR", []string{"GET / HTTP/1.1\r\nHost: x\rX: y\r\n\r\n"}, "GET / HTTP/1.1\r\nHost: x\r"},
		{"split across reads", []string{"GET / HTTP/1.1\r", "\nHost: x\r", "\n", "\n"}, "GET / HTTP/1.1\r\nHost: x\r\n"},
	}
	for _, c := range cases {
		var l lineCheck
		l.begin()
		passed, refused := feedAll(&l, c.chunks...)
		if !refused || passed != c.passed {
			t.Errorf("%s: refused %v after %q, want refused after %q", c.name, refused, passed, c.passed)
		}
	}
}

func TestLineCheckLetsGoodHeadsAndBodiesThrough(t *testing.T) {
	cases := []struct {
		name   string
		chunks []string
	}{
		{"CRLF head, LF in the body", []string{"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 6\r\n\r\n{\n\n}\n\n"}},
		{"split head", []string{"GE", "T / HTTP/1.1\r", "\n", "Host: x\r\n\r", "\nbody\n"}},
		{"empty line first", []string{"\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n"}},
		{"no headers", []string{"GET / HTTP/1.0\r\n\r\n\n\n"}},
		// Not a request line: left to fasthttp (a pipelined body, say).
		{"lower-case start", []string{"rest of a body\n\n"}},
		{"JSON start", []string{"{\"a\":\n1}\n"}},
	}
	for _, c := range cases {
		var l lineCheck
		l.begin()
		if passed, refused := feedAll(&l, c.chunks...); refused {
			t.Errorf("%s: refused after %q", c.name, passed)
		}
	}
}

func TestLineCheckRestartsAfterEachResponse(t *testing.T) {
	var l lineCheck
	l.begin()
	if _, refused := feedAll(&l, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"); refused {
		t.Fatal("first head refused")
	}
	// The interim 100 Continue is not the answer: the body that follows
	// is not a head.
	l.responseWritten([]byte("HTTP/1.1 100 Continue\r\n\r\n"))
	if _, refused := feedAll(&l, "BODY WITH\nNEWLINES\n\n"); refused {
		t.Fatal("a body after 100 Continue was checked as a head")
	}
	l.responseWritten([]byte("HTTP/1.1 200 OK\r\n"))
	if _, refused := feedAll(&l, "GET / HTTP/1.1\nHost: x\n\n"); !refused {
		t.Fatal("the second head's bare LF was let through")
	}
}

func TestLineCheckTellsALongRequestLine(t *testing.T) {
	var l lineCheck
	l.begin()
	feedAll(&l, "GET /"+strings.Repeat("a", ReadBufferBytes))
	if !l.longRequestLine() {
		t.Error("a request line of a whole buffer is not a long request line")
	}
	l.begin()
	feedAll(&l, "GET / HTTP/1.1\r\nX: "+strings.Repeat("a", ReadBufferBytes))
	if l.longRequestLine() {
		t.Error("long headers count as a long request line")
	}
}

// TestLineCheckReadsAlikeHoweverTheBytesArrive splits heads at every
// position (and into single bytes): the verdict and the bytes let through
// do not depend on how the reads fall.
func TestLineCheckReadsAlikeHoweverTheBytesArrive(t *testing.T) {
	heads := []string{
		"GET /v1/me HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer k\r\n\r\nbody\n\n",
		"\r\nPOST /v1/me HTTP/1.1\r\nHost: x\r\n\r\n",
		"GET /v1/me HTTP/1.1\r\nHost: x\nX: y\r\n\r\n",
		"GET /v1/me HTTP/1.1\r\nHost: x\r\n\n",
		"GET /v1/me HTTP/1.1\r\nHost: x\ry\r\n\r\n",
		"GET /v1/me HTTP/1.1\n\n",
		"GET\n",
	}
	for _, head := range heads {
		var whole lineCheck
		whole.begin()
		wantPassed, wantRefused := feedAll(&whole, head)
		for cut := 1; cut < len(head); cut++ {
			var l lineCheck
			l.begin()
			if passed, refused := feedAll(&l, head[:cut], head[cut:]); passed != wantPassed || refused != wantRefused {
				t.Errorf("%q cut at %d: refused %v after %q, whole: %v after %q", head, cut, refused, passed, wantRefused, wantPassed)
			}
		}
		var l lineCheck
		l.begin()
		if passed, refused := feedAll(&l, strings.Split(head, "")...); passed != wantPassed || refused != wantRefused {
			t.Errorf("%q byte by byte: refused %v after %q, whole: %v after %q", head, refused, passed, wantRefused, wantPassed)
		}
	}
}
