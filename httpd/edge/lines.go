package edge

import "bytes"

// lineCheck follows the bytes of a request head as a connection reads
// them and stops at the first line ending that is not CRLF. fasthttp
// recognises a bare LF inside a head but not at its end, so a head ended
// by "\n\n" would otherwise wait for more bytes until the read timeout;
// and a bare LF or CR that one parser takes as a line break and another
// does not is a way to smuggle a header past a proxy in front. RFC 9112
// section 2.2 lets a server refuse both.
//
// The check starts at the connection's first byte and again after each
// response, and ends with the head's blank line: bodies are not looked
// at. A client that pipelines sends its next head before the response;
// when the bytes read after a response do not start like a request line
// (an upper-case method, then a space) the check leaves that head to
// fasthttp instead of misreading a body as one.
type lineCheck struct {
	active           bool // reading a head
	started          bool // its request line has begun
	inMethod         bool // inside the method token
	methodBytes      int
	lineEmpty        bool // nothing but the line ending so far on this line
	prevCR           bool
	seen             int
	requestLineEnded bool
}

// methodBytesMax is longer than any method this server routes.
const methodBytesMax = 16

// begin starts checking a new request head.
func (l *lineCheck) begin() { *l = lineCheck{active: true, lineEmpty: true} }

// responseWritten notes a response (part) on its way out: the next bytes
// read start a new head. The interim "100 Continue" is not an answer.
func (l *lineCheck) responseWritten(p []byte) {
	if !bytes.HasPrefix(p, []byte("HTTP/1.1 100 ")) {
		l.begin()
	}
}

// feed checks the next bytes read. It returns how many of them come
// before a bad line ending, and false when there is one. The method is
// looked at byte by byte; the rest of each line is skipped with a search
// for its LF, so a head costs little more than a copy.
func (l *lineCheck) feed(p []byte) (good int, ok bool) {
	i := 0
	for l.active && i < len(p) {
		if l.prevCR {
			if p[i] != '\n' {
				return i, false // a bare CR
			}
			i++
			l.prevCR = false
			if l.endLine() {
				return len(p), true
			}
			continue
		}
		if !l.started || l.inMethod {
			if !l.methodByte(p[i]) {
				return i, false // a bare LF
			}
			i++
		} else {
			n, bad := l.skipLine(p[i:])
			if bad >= 0 {
				return i + bad, false
			}
			i += n
		}
		if l.seen = l.seen + 1; l.seen >= ReadBufferBytes {
			l.active = false // fasthttp refuses a head this long itself
		}
	}
	return len(p), true
}

// methodByte takes one byte of the start of a head: empty lines, then the
// method up to its space. It reports false for a bare LF; a byte that
// cannot start a request line ends the check.
func (l *lineCheck) methodByte(b byte) bool {
	switch b {
	case '\r':
		l.prevCR = true
		return true
	case '\n':
		return false
	}
	if !l.started {
		l.started, l.inMethod = true, true
	}
	switch {
	case b == ' ' && l.methodBytes > 0:
		l.inMethod = false
	case b >= 'A' && b <= 'Z' && l.methodBytes < methodBytesMax:
		l.methodBytes++
	default:
		l.active = false // not a request line: fasthttp judges it
	}
	l.lineEmpty = false
	return true
}

// skipLine goes through p to the end of the current line (its CRLF) or
// of p. It returns how far it went and, at a bad line ending, the number
// of bytes before the refusal (else -1).
func (l *lineCheck) skipLine(p []byte) (n, bad int) {
	lf := bytes.IndexByte(p, '\n')
	content := p
	if lf >= 0 {
		content = p[:lf]
	}
	if cr := bytes.IndexByte(content, '\r'); cr >= 0 && cr < len(content)-1 {
		return 0, cr + 1 // a bare CR: let it through, refuse what follows
	}
	switch {
	case lf < 0 && len(p) > 0 && p[len(p)-1] == '\r':
		// A CR at the end of what was read: its LF may come next.
		l.prevCR = true
		l.lineEmpty = l.lineEmpty && len(p) == 1
		l.seen += len(p) - 1
		return len(p), -1
	case lf < 0:
		l.lineEmpty = l.lineEmpty && len(p) == 0
		l.seen += len(p) - 1
		return len(p), -1
	case lf == 0 || p[lf-1] != '\r':
		return 0, lf // a bare LF
	}
	l.lineEmpty = l.lineEmpty && lf == 1
	l.seen += lf
	if l.endLine() {
		return len(p), -1
	}
	return lf + 1, -1
}

// endLine notes the end of a line. It reports true when that line was
// the blank one that ends the head.
func (l *lineCheck) endLine() bool {
	if l.lineEmpty && l.started {
		l.active = false
		return true
	}
	// An empty line before the request line is allowed (RFC 9112 section
	// 2.2); any other line that ends here had content.
	l.requestLineEnded = l.requestLineEnded || l.started
	l.lineEmpty = true
	return false
}

// longRequestLine reports whether the check read a whole buffer of a head
// without the end of its request line.
func (l *lineCheck) longRequestLine() bool {
	return l.started && !l.requestLineEnded && l.seen >= ReadBufferBytes
}
