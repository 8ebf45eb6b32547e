package edge

import (
	"bytes"

	"github.com/valyala/fasthttp"
)

// HSTSValue is the Strict-Transport-Security of every answer to a request
// made over HTTPS: for a year the browser goes to this host over HTTPS
// only, so nobody on the network can take it to a plain-HTTP page of the
// host, to read its traffic or plant a cookie. It has no
// includeSubDomains: the server may share its domain with hosts it knows
// nothing of, which may not serve HTTPS, and the __Host- cookies do not
// need it. A plain-HTTP answer never carries it (browsers ignore it there).
const HSTSValue = "max-age=31536000"

// strictTransport adds HSTSValue to the answer of a request made over
// HTTPS. It runs after the answer is made, so an answer another node gave
// (forwarded) gets it too.
func (c Clients) strictTransport(ctx *fasthttp.RequestCtx) {
	if c.IsHTTPS(ctx) {
		ctx.Response.Header.Set(fasthttp.HeaderStrictTransportSecurity, HSTSValue)
	}
}

// IsHTTPS reports whether the client reached us over HTTPS: TLS on this
// listener, or a trusted proxy's X-Forwarded-Proto: https, or (for a
// request a follower forwarded) what the follower saw. A forwarded
// request arrives over a node connection, whose own TLS says nothing about
// the client, so only the forwarding node's word counts for it. A header
// from a peer that is not a trusted proxy is the client's own claim and is
// ignored.
func (c Clients) IsHTTPS(ctx *fasthttp.RequestCtx) bool {
	if c.Forwarded != nil {
		if https, forwarded := c.Forwarded(ctx); forwarded {
			return https
		}
	}
	if ctx.IsTLS() {
		return true
	}
	if len(c.Trusted) == 0 || !c.IsTrusted(ctx.RemoteIP()) {
		return false
	}
	// A proxy that appends to the header puts its own value last; one
	// that replaces it sends just one.
	proto := ctx.Request.Header.Peek(fasthttp.HeaderXForwardedProto)
	if i := bytes.LastIndexByte(proto, ','); i >= 0 {
		proto = proto[i+1:]
	}
	return bytes.EqualFold(bytes.TrimSpace(proto), []byte("https"))
}
