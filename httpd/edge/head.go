package edge

import (
	"bytes"

	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/actors"
)

// refuseHead returns the error a request head earns before anything else
// happens to the request, or nil. It judges the framing from the raw
// header lines, because fasthttp keeps no trace of a Content-Length it
// overrode with Transfer-Encoding. fasthttp itself refuses a second
// Content-Length, a second Transfer-Encoding and any coding but chunked
// and identity.
//
// RFC 9112 section 6.1: a request with both Transfer-Encoding and
// Content-Length may be an attempt at request smuggling and ought to be
// handled as an error; a Transfer-Encoding whose final coding is not
// chunked leaves the body length unknown (400); a Transfer-Encoding in an
// HTTP/1.0 request means faulty framing. Each of these closes the
// connection, which RefuseBadHeads and HeaderReceived see to.
func refuseHead(h *fasthttp.RequestHeader) error {
	proto := h.Protocol()
	http10 := bytes.Equal(proto, []byte("HTTP/1.0"))
	if !http10 && !bytes.Equal(proto, []byte("HTTP/1.1")) {
		// RFC 9110 section 15.6.6: the major version is not one this
		// server speaks (HTTP/1.2 and later minors were served as
		// HTTP/1.1 by HeaderReceived).
		return actors.Errorf(CodeVersionNotSupported, "only HTTP/1.1 and HTTP/1.0 are served")
	}
	if !http10 && len(h.Host()) == 0 {
		return actors.Errorf(CodeBadRequest, "malformed HTTP request: an HTTP/1.1 request needs a Host header")
	}
	var contentLength, chunked bool
	transferEncoding := 0
	for line := range bytes.Lines(h.RawHeaders()) {
		if len(line) == 0 || (line[0]|0x20 != 'c' && line[0]|0x20 != 't') {
			continue // neither framing header: skip the compare
		}
		name, value, found := bytes.Cut(line, []byte(":"))
		if !found {
			continue
		}
		switch {
		case bytes.EqualFold(name, []byte(fasthttp.HeaderContentLength)):
			contentLength = true
		case bytes.EqualFold(name, []byte(fasthttp.HeaderTransferEncoding)):
			transferEncoding++
			chunked = bytes.EqualFold(bytes.TrimSpace(value), []byte("chunked"))
		}
	}
	switch {
	case transferEncoding == 0:
		return nil
	case http10:
		return actors.Errorf(CodeBadRequest, "malformed HTTP request: Transfer-Encoding is not defined in HTTP/1.0")
	case contentLength:
		return actors.Errorf(CodeBadRequest, "malformed HTTP request: send Content-Length or Transfer-Encoding, not both")
	case transferEncoding > 1 || !chunked:
		return actors.Errorf(CodeBadRequest, "malformed HTTP request: the only Transfer-Encoding served is chunked")
	}
	return nil
}

// servedAsHTTP11 reports whether proto is HTTP/1.x with a minor version
// above 1, which RFC 9112 section 2.3 says to process as the highest
// minor version the server conforms to. fasthttp would otherwise apply
// HTTP/1.0 rules to it (no Host needed), unlike a proxy in front that
// follows the RFC: such a difference in reading one request is what
// request smuggling is built on.
func servedAsHTTP11(proto []byte) bool {
	return len(proto) == len("HTTP/1.x") && bytes.HasPrefix(proto, []byte("HTTP/1.")) && proto[7] >= '2' && proto[7] <= '9'
}
