package admin

import (
	"bytes"
	"errors"
	"io"
	"os"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/actors"
	"github.com/addrwatch/addrwatch/cluster/clustererr"
	"github.com/addrwatch/addrwatch/httpd/edge"
)

// The admin listener streams request bodies (the server's
// NewAdminHTTPServer), so that the operator token is checked before a
// backup upload is read. Every route but the restore has a small JSON
// body: ReadBody reads it whole, up to BodyBytesMax, before the handlers
// run, and they use ctx.PostBody as usual. A restore reads its upload
// itself, straight to a file.
const (
	// BodyBytesMax bounds the JSON bodies of the admin API.
	BodyBytesMax = 64 << 10
	// restoreBytesMax bounds a backup file uploaded for a restore.
	restoreBytesMax = 1 << 30
	// restoreReadTimeout is the time a restore upload may take.
	restoreReadTimeout = 10 * time.Minute
	restorePath        = Prefix + "/restore"
)

// Request is the admin listener's rule for one request, from its head: a
// restore gets the long read timeout its upload may need.
func Request(h *fasthttp.RequestHeader) fasthttp.RequestConfig {
	if isRestore(h.Method(), h.RequestURI()) {
		return fasthttp.RequestConfig{ReadTimeout: restoreReadTimeout}
	}
	return fasthttp.RequestConfig{}
}

// isRestore reports whether a request is a restore, from its method and
// request target (the path as sent, which is all there is before the
// URI is parsed).
func isRestore(method, requestURI []byte) bool {
	path, _, _ := bytes.Cut(requestURI, []byte("?"))
	return bytes.Equal(method, []byte(fasthttp.MethodPost)) && bytes.Equal(path, []byte(restorePath))
}

// ReadBody reads the body of every admin request but a restore before
// next runs, answering with writeError (the spec's {code, error}) a body
// that is too large or broken. A restore's upload is left on the
// connection for the restore handler, or unread when the token check
// refuses it: so its connection closes after the answer, whatever was
// read of it.
func ReadBody(writeError func(ctx *fasthttp.RequestCtx, err error), next fasthttp.RequestHandler) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		if ctx.IsPost() && string(ctx.Path()) == restorePath {
			next(ctx)
			edge.CloseAfterAnswer(ctx)
			return
		}
		stream := ctx.RequestBodyStream()
		if stream == nil {
			next(ctx)
			return
		}
		tooLarge := actors.Errorf(actors.CodeValidation, "request body exceeds %d bytes", BodyBytesMax)
		if ctx.Request.Header.ContentLength() > BodyBytesMax {
			writeError(ctx, tooLarge)
			edge.CloseAfterAnswer(ctx)
			return
		}
		body, err := io.ReadAll(io.LimitReader(stream, BodyBytesMax+1))
		switch {
		case err != nil:
			writeError(ctx, actors.Errorf(edge.CodeBadRequest, "malformed HTTP request"))
			edge.CloseAfterAnswer(ctx)
			return
		case len(body) > BodyBytesMax:
			writeError(ctx, tooLarge)
			edge.CloseAfterAnswer(ctx)
			return
		}
		ctx.Request.SetBody(body)
		next(ctx)
	}
}

// restore replaces the cluster's state with an uploaded backup file. The
// upload goes to a file in the spool directory as it arrives, is checked
// whole there, and only then replaces anything.
func (a *API) restore(ctx *fasthttp.RequestCtx) error {
	f, err := os.CreateTemp(a.cfg.SpoolDir, ".addrwatch-restore-*.snap")
	if err != nil {
		a.cfg.Log.Error("restore: spool file", "err", err)
		return actors.Errorf(actors.CodeInternal, "internal error")
	}
	defer os.Remove(f.Name())
	n, err := io.Copy(f, io.LimitReader(requestBody(ctx), restoreBytesMax+1))
	if cerr := f.Close(); err == nil && cerr != nil {
		a.cfg.Log.Error("restore: spool file", "err", cerr)
		return actors.Errorf(actors.CodeInternal, "internal error")
	}
	var pathErr *os.PathError
	switch {
	case errors.As(err, &pathErr):
		a.cfg.Log.Error("restore: spool file", "err", err)
		return actors.Errorf(actors.CodeInternal, "internal error")
	case err != nil:
		return actors.Errorf(edge.CodeBadRequest, "the upload broke off before its end")
	case n > restoreBytesMax:
		return actors.Errorf(actors.CodeValidation, "the backup file exceeds %d bytes", restoreBytesMax)
	case n == 0:
		return actors.Errorf(actors.CodeValidation, "the request body must be a backup file from GET /admin/v1/backup")
	}
	if err := a.cfg.Operator.Restore(f.Name()); err != nil {
		if errors.Is(err, clustererr.ErrNotLeader) || errors.Is(err, clustererr.ErrOutcomeUnknown) {
			return err
		}
		return actors.Errorf(actors.CodeValidation, "the backup was not restored: %v", err)
	}
	a.cfg.WriteJSON(ctx, fasthttp.StatusOK, map[string]bool{"restored": true})
	return nil
}

// requestBody reads the request's body: its stream on a streaming server,
// else the body fasthttp has read.
func requestBody(ctx *fasthttp.RequestCtx) io.Reader {
	if stream := ctx.RequestBodyStream(); stream != nil {
		return stream
	}
	return bytes.NewReader(ctx.PostBody())
}
