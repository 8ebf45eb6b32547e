package actors

import (
	"errors"
	"fmt"
)

// Code is a machine-readable error code of the Agent API. The HTTP status
// for each code lives in one table in package httpd.
type Code string

// The codes of the spec's Errors table, plus Internal for a recovered
// programmer error (which must never be seen). The codes only the HTTP
// edge gives (BAD_REQUEST, METHOD_NOT_ALLOWED and the framing codes named
// after their HTTP status) live in package httpd.
const (
	CodeUnauthorized        Code = "UNAUTHORIZED"
	CodeForbidden           Code = "FORBIDDEN"
	CodeNotFound            Code = "NOT_FOUND"
	CodeValidation          Code = "VALIDATION"
	CodeStaleVersion        Code = "STALE_VERSION"
	CodeConflict            Code = "CONFLICT"
	CodeDuplicateAddress    Code = "DUPLICATE_ADDRESS"
	CodeOverviewFull        Code = "OVERVIEW_FULL"
	CodeSpaceFull           Code = "SPACE_FULL"
	CodeBookmarkFull        Code = "BOOKMARK_FULL"
	CodeCrossTypeMove       Code = "CROSS_TYPE_MOVE"
	CodeIdempotencyConflict Code = "IDEMPOTENCY_CONFLICT"
	CodeRateLimited         Code = "RATE_LIMITED"
	CodeHTTPError           Code = "HTTP_ERROR"
	CodeInternal            Code = "INTERNAL"
)

// Error is the one error type that carries a spec code to the edge.
// Message is safe to show to a client: it never holds a secret or the
// details of a resource the caller cannot see.
type Error struct {
	Code    Code   `json:"code"`
	Message string `json:"error"`
	// RetryAfter, in seconds, goes out as the Retry-After header of a 429
	// or a 503 (httpd gives a 503 without one a default).
	RetryAfter int `json:"-"`
}

func (e *Error) Error() string { return string(e.Code) + ": " + e.Message }

// Errorf builds an *Error with a formatted message.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the spec code of err, or CodeInternal when err is not an
// *Error (an unexpected failure).
func ErrorCode(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return CodeInternal
}

// unauthorizedMessage is the one answer to every credential that does not
// authenticate: missing, malformed, wrong, revoked or expired alike.
const unauthorizedMessage = "missing or invalid credentials"

// Shared errors whose wording is part of the product.
var (
	errUnauthorized = Errorf(CodeUnauthorized, unauthorizedMessage)
	// ErrUnauthorized is the refusal of any credential that does not
	// authenticate, whatever the reason: the edge gives the same one.
	ErrUnauthorized = errUnauthorized
	errReadOnlyKey  = Errorf(CodeForbidden, "this API key has read capability and cannot make changes")
	// ErrReadOnlyKey refuses any change asked with a read key; the edge
	// refuses with it before proposing.
	ErrReadOnlyKey    = errReadOnlyKey
	errNotWritable    = Errorf(CodeForbidden, "the grant on this resource does not permit changes")
	errStaleVersion   = Errorf(CodeStaleVersion, "the resource changed since you read it; re-read it and use its current version")
	errCardNotFound   = Errorf(CodeNotFound, "card not found")
	errSpaceNotFound  = Errorf(CodeNotFound, "space not found")
	errAccountDeleted = Errorf(CodeUnauthorized, unauthorizedMessage)
)
