package edge

import (
	"bytes"
	"net/url"

	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/actors"
)

// refusePath answers 404 for a path that starts with "//" or holds a
// backslash (raw or as %5C). No route has such a path, so 404 is the
// spec's answer for it ("an unknown path answers 404"); it is refused
// here, before the router, because a browser reads "//host" and "/\host"
// in a Location as another site, and fasthttp would otherwise normalise
// "//evil.example/../v1/docs/" into a known path.
func refusePath(ctx *fasthttp.RequestCtx) error {
	original := ctx.URI().PathOriginal()
	if bytes.HasPrefix(original, []byte("//")) || bytes.IndexByte(original, '\\') >= 0 || bytes.IndexByte(ctx.Path(), '\\') >= 0 {
		return actors.Errorf(actors.CodeNotFound, "no such path")
	}
	return nil
}

// RedirectTarget is the Location of the 307 that drops a trailing slash:
// the normalised path the router matched (never the client's own bytes),
// escaped again, and the client's query. It always starts with a single
// "/" followed by a route's first segment, so it names this server.
func RedirectTarget(normalisedPath string, query []byte) string {
	target := (&url.URL{Path: normalisedPath}).EscapedPath()
	if len(query) > 0 {
		target += "?" + string(query)
	}
	return target
}
