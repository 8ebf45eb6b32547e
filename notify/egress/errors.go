package egress

import (
	"context"
	"errors"
	"net"
	"net/url"
	"time"
)

// Class says what kind of failure an Error is, for the delivery log and
// for the deliverer's choice to try again or not.
type Class string

const (
	// ClassInvalid: the URL is not one a request may go to (scheme,
	// user name, host syntax). Trying again changes nothing.
	ClassInvalid Class = "invalid_url"
	// ClassRefused: the host resolved to an address this node does not
	// send to (loopback, private, metadata, ...).
	ClassRefused Class = "refused_target"
	// ClassRateLimited: the account or the endpoint sent too much
	// lately; Error.RetryAfter says when a send would be let through.
	ClassRateLimited Class = "rate_limited"
	// ClassTimeout: the connect or the total timeout ran out.
	ClassTimeout Class = "timeout"
	// ClassConnection: the name did not resolve, the connection or the
	// TLS handshake failed, or the answer broke off.
	ClassConnection Class = "connection"
)

// Error is a request that got no answer. Its text names the target only
// as Target.String does, without the path and query that may hold a
// token, and never quotes the URL itself.
type Error struct {
	Class Class
	// Target is the redacted URL.
	Target string
	// RetryAfter is, for ClassRateLimited, how long until the limits
	// let this request through.
	RetryAfter time.Duration
	// Detail says what happened, in words safe to log.
	Detail string
	cause  error
}

func (e *Error) Error() string {
	return string(e.Class) + ": " + e.Target + ": " + e.Detail
}

// Unwrap gives errors.Is the cause (context.DeadlineExceeded, a
// *net.OpError), which never holds the URL: see classify.
func (e *Error) Unwrap() error { return e.cause }

// ClassOfError is err's Class when it is (or wraps) an *Error, and ""
// otherwise.
func ClassOfError(err error) Class {
	var e *Error
	if errors.As(err, &e) {
		return e.Class
	}
	return ""
}

func invalid(detail string) *Error { return &Error{Class: ClassInvalid, Detail: detail} }

// classify turns the error of an HTTP exchange into an *Error. net/http
// wraps its errors in a *url.Error whose text quotes the whole URL, query
// and all: that wrapper is dropped here, and only the cause is kept.
func classify(target Target, err error) *Error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	e := &Error{Class: ClassConnection, Target: target.String(), Detail: err.Error(), cause: err}
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		e.Class = ClassTimeout
	}
	return e
}
