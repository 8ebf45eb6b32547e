package httpd

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/actors"
	"github.com/addrwatch/addrwatch/cluster/clustererr"
	"github.com/addrwatch/addrwatch/httpd/edge"
)

// statusOf is the one table from error code to HTTP status.
// The codes only the HTTP edge gives: a request refused before it reaches
// an operation, each named after its HTTP status.
const (
	codeBadRequest                      = edge.CodeBadRequest
	codeMethodNotAllowed    actors.Code = "METHOD_NOT_ALLOWED"
	codeURITooLong                      = edge.CodeURITooLong
	codeHeadersTooLarge                 = edge.CodeHeadersTooLarge
	codeVersionNotSupported             = edge.CodeVersionNotSupported
)

var statusOf = map[actors.Code]int{
	actors.CodeUnauthorized:        fasthttp.StatusUnauthorized,
	actors.CodeForbidden:           fasthttp.StatusForbidden,
	actors.CodeNotFound:            fasthttp.StatusNotFound,
	actors.CodeValidation:          fasthttp.StatusUnprocessableEntity,
	actors.CodeStaleVersion:        fasthttp.StatusConflict,
	actors.CodeConflict:            fasthttp.StatusConflict,
	actors.CodeDuplicateAddress:    fasthttp.StatusConflict,
	actors.CodeOverviewFull:        fasthttp.StatusConflict,
	actors.CodeSpaceFull:           fasthttp.StatusConflict,
	actors.CodeBookmarkFull:        fasthttp.StatusConflict,
	actors.CodeCrossTypeMove:       fasthttp.StatusConflict,
	actors.CodeIdempotencyConflict: fasthttp.StatusConflict,
	actors.CodeRateLimited:         fasthttp.StatusTooManyRequests,
	actors.CodeHTTPError:           fasthttp.StatusServiceUnavailable,
	codeBadRequest:                 fasthttp.StatusBadRequest,
	codeMethodNotAllowed:           fasthttp.StatusMethodNotAllowed,
	codeURITooLong:                 fasthttp.StatusRequestURITooLong,
	codeHeadersTooLarge:            fasthttp.StatusRequestHeaderFieldsTooLarge,
	codeVersionNotSupported:        fasthttp.StatusHTTPVersionNotSupported,
	actors.CodeInternal:            fasthttp.StatusInternalServerError,
}

// StatusOf returns the HTTP status of an error code.
func StatusOf(code actors.Code) int {
	if s, known := statusOf[code]; known {
		return s
	}
	return fasthttp.StatusInternalServerError
}

// specError is the one place an error becomes the spec's {code, error}:
// an *actors.Error (wrapped or not) as it is, a condition of the cluster
// as clusterRefusals says, anything else a 503 that says nothing of its
// cause.
func specError(err error) *actors.Error {
	if e, ok := errors.AsType[*actors.Error](err); ok && e != nil {
		return e
	}
	for _, r := range clusterRefusals {
		if errors.Is(err, r.condition) {
			message := r.message
			if message == "" {
				message = err.Error()
			}
			return &actors.Error{Code: r.code, Message: message, RetryAfter: r.retryAfter}
		}
	}
	if l := unnamedFailureLog.Load(); l != nil {
		l.Warn("a request failed for a reason the API does not name; the client was told to retry", "err", err)
	}
	return actors.Errorf(actors.CodeHTTPError, "the request could not be completed; retry shortly")
}

// unnamedFailureLog is where specError reports an error it cannot name:
// the client hears only "retry shortly", so the cause must reach the
// operator's log. New sets it from Config.Logger (a process runs one
// Server).
var unnamedFailureLog atomic.Pointer[slog.Logger]

// clusterRefusals is the one table from a condition of the cluster
// (package clustererr) to what a client is told: the first whose
// condition matches wins. An empty message says the condition in its own
// words, which name nothing secret (a member, a group, a slot, a
// version); the others replace words that would name a node.
var clusterRefusals = []struct {
	condition  error
	code       actors.Code
	message    string
	retryAfter int // seconds; a 503 without one gets the default (retry_after.go)
}{
	{clustererr.ErrSlotAway, actors.CodeHTTPError, "this account is moving between the cluster's raft groups; retry in a second", 1},
	{clustererr.ErrGroupMoved, actors.CodeHTTPError, "this account's raft group is now led elsewhere, or the account has just moved to another group; retry in a second", 1},
	{clustererr.ErrNotLeader, actors.CodeHTTPError, msgNoLeader, 0},
	{clustererr.ErrNoDirectory, actors.CodeHTTPError, msgNoLeader, 0},
	{clustererr.ErrOutcomeUnknown, actors.CodeHTTPError, msgOutcomeUnknown, 0},
	{context.DeadlineExceeded, actors.CodeHTTPError, msgOutcomeUnknown, 0},
	{clustererr.ErrFeatureNotAdmitted, actors.CodeHTTPError, "", 0},
	{clustererr.ErrTransferIncomplete, actors.CodeHTTPError, "the leadership transfer did not complete in time (the target may still be catching up on the log); ask again in a few seconds", 2},
	{clustererr.ErrUnknownServer, actors.CodeNotFound, "", 0},
	{clustererr.ErrNoSuchAccount, actors.CodeNotFound, "", 0},
	{clustererr.ErrInvalidMember, actors.CodeValidation, "", 0},
	{clustererr.ErrNoSuchGroup, actors.CodeValidation, "", 0},
	{clustererr.ErrNoSuchSlot, actors.CodeValidation, "", 0},
	{clustererr.ErrGroupNotNamed, actors.CodeValidation, "", 0},
	{clustererr.ErrMemberConflict, actors.CodeConflict, "", 0},
	{clustererr.ErrNoQuorum, actors.CodeConflict, "", 0},
	{clustererr.ErrSlotMoving, actors.CodeConflict, "", 0},
	{clustererr.ErrSlotAtTarget, actors.CodeConflict, "", 0},
}

const (
	msgNoLeader       = "no leader is available right now; retry shortly"
	msgOutcomeUnknown = "the write may or may not have been applied; re-read before retrying"
)

// writeError writes the {"code","error"} body of failure.
func writeError(ctx *fasthttp.RequestCtx, failure error) {
	writeSpecError(ctx, specError(failure))
}

// writeSpecError writes the {"code","error"} body of err, with its status.
func writeSpecError(ctx *fasthttp.RequestCtx, err *actors.Error) {
	if err.Code == actors.CodeUnauthorized {
		// RFC 6750: a 401 names the scheme the credentials must use.
		ctx.Response.Header.Set(fasthttp.HeaderWWWAuthenticate, `Bearer realm="addrwatch"`)
	}
	switch {
	case err.RetryAfter > 0:
		ctx.Response.Header.Set(fasthttp.HeaderRetryAfter, strconv.Itoa(err.RetryAfter))
	case StatusOf(err.Code) == fasthttp.StatusServiceUnavailable:
		ctx.Response.Header.Set(fasthttp.HeaderRetryAfter, strconv.Itoa(retryAfterDefaultSeconds)) // retry_after.go
	}
	ctx.Response.Header.SetContentType("application/json")
	ctx.SetStatusCode(StatusOf(err.Code))
	body, _ := json.Marshal(err)
	ctx.SetBody(body)
}

// writeJSON writes a success body.
func writeJSON(ctx *fasthttp.RequestCtx, status int, body any) {
	if err := answer(ctx, status, body); err != nil {
		writeError(ctx, err)
	}
}

// answer writes a success body, or returns the internal error, unwritten,
// of a body that cannot be encoded (a route writes it).
func answer(ctx *fasthttp.RequestCtx, status int, body any) error {
	if status == fasthttp.StatusNoContent || body == nil {
		ctx.SetStatusCode(status)
		return nil
	}
	if v, rendered := body.(actors.Rendered); rendered {
		// Rendered by the account, maybe kept for later reads: nothing
		// ever writes into it, so the answer may send it without a copy.
		ctx.Response.Header.SetContentType("application/json")
		ctx.SetStatusCode(status)
		ctx.Response.SetBodyRaw(v)
		return nil
	}
	// The body is appended to a pooled buffer (the hot read views append
	// themselves, actors/views_json.go); SetBody copies it into the
	// response.
	buf := appendBuffers.Get().(*[]byte)
	b, err := actors.AppendJSON((*buf)[:0], body)
	if cap(b) <= appendBufferKeepMax {
		// SetBody below copies b, so the buffer may go back once the
		// answer is set; a large one (a long History) is left to the GC.
		defer appendBuffers.Put(buf)
		*buf = b
	}
	if err != nil {
		return actors.Errorf(actors.CodeInternal, "internal error")
	}
	ctx.Response.Header.SetContentType("application/json")
	ctx.SetStatusCode(status)
	ctx.SetBody(b)
	return nil
}

// appendBufferKeepMax is the largest buffer appendBuffers keeps.
const appendBufferKeepMax = 64 << 10

// appendBuffers hold the bodies answers are written into.
var appendBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

// writeResult writes a successful actor result (answer).
func writeResult(ctx *fasthttp.RequestCtx, res actors.Result) error {
	return answer(ctx, res.Status, res.Body)
}
