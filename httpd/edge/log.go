package edge

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"time"

	"github.com/valyala/fasthttp"
)

// fasthttpLogger takes fasthttp's own log lines into the server's slog
// logger. fasthttp formats the errors of a malformed request with the
// request's bytes in them, Authorization header included, and
// SecureErrorLogMessage leaves some of those in (the request line, a bad
// header value): so no argument reaches the log as fasthttp formatted it.
// An error becomes a fixed description of its kind, an address or a
// number stays, anything else is withheld.
type fasthttpLogger struct {
	log *slog.Logger
}

// NewLogger returns fasthttp's logger for the named listener: its lines go
// to log (nil: slog's default logger) with the listener's name, redacted.
func NewLogger(log *slog.Logger, listener string) fasthttp.Logger {
	if log == nil {
		log = slog.Default()
	}
	return fasthttpLogger{log: log.With("listener", listener)}
}

func (l fasthttpLogger) Printf(format string, args ...any) {
	safe := make([]any, len(args))
	for i, arg := range args {
		safe[i] = redactLogArg(arg)
	}
	// The one line fasthttp writes per failed connection is about the
	// client, not the server: it is worth a line, not a warning.
	level := slog.LevelWarn
	if strings.HasPrefix(format, "error when serving connection") {
		level = slog.LevelInfo
	}
	l.log.Log(context.Background(), level, "http: "+fmt.Sprintf(format, safe...))
}

// redactLogArg returns what of a fasthttp log argument may be logged.
func redactLogArg(arg any) any {
	switch v := arg.(type) {
	case net.Addr, net.IP, time.Duration,
		int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, float32, float64, bool:
		return v
	case error:
		return errorKind(v)
	}
	return "[withheld]"
}

// errorKind describes an error by its kind alone. A network error from
// the socket (accept, read, write) holds addresses and a system call's
// message, never request bytes, so it is kept as it is.
func errorKind(err error) string {
	var small *fasthttp.ErrSmallBuffer
	var op *net.OpError
	switch {
	case errors.As(err, &op):
		return op.Error()
	case errors.Is(err, errBareLineEnding):
		return "request head with a bare LF or CR"
	case errors.As(err, &small):
		return "request head too large"
	case errors.Is(err, fasthttp.ErrBodyTooLarge):
		return "request body too large"
	}
	for _, known := range fixedParseErrors {
		if errors.Is(err, known) {
			return known.Error()
		}
	}
	return "malformed request (details withheld: they may hold the request's bytes)"
}

// fixedParseErrors are fasthttp's parse errors whose text is a constant,
// so it names the problem without quoting the request.
var fixedParseErrors = []error{
	fasthttp.ErrMissingRequestMethod,
	fasthttp.ErrUnsupportedRequestMethod,
	fasthttp.ErrExtraWhitespaceInRequestLine,
	fasthttp.ErrEmptyRequestURI,
	fasthttp.ErrDuplicateContentLength,
	fasthttp.ErrUnsupportedTransferEncoding,
	fasthttp.ErrNonNumericChars,
	fasthttp.ErrorInvalidURI,
	io.ErrUnexpectedEOF,
}
