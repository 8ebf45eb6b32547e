// Package send delivers one chain event to one owner's channel: a signed
// webhook, an ntfy topic, or an email through the operator's SMTP relay.
// Each Send makes exactly one try and says what it gave (Outcome); it
// never retries, never sleeps and keeps no state beyond the budgets it is
// handed, so the deliverer (which owns the outbox, the schedule and the
// delivery log) decides everything about when to try again.
//
// The wire formats are documented for receivers in ../DESIGN.md.
package send

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/addrwatch/addrwatch/actors"
	"github.com/addrwatch/addrwatch/notify/egress"
	"github.com/addrwatch/addrwatch/notify/keys"
)

// Delivery is one try of one event to one channel.
type Delivery struct {
	// Account names the budgets the try is counted against (egress
	// limits), with ChannelID.
	Account   string
	ChannelID string
	// Attempt is 1 for the first try; a redelivery has the same Event,
	// hence the same body, and the next Attempt.
	Attempt int
	Event   actors.ChainEvent
	// CardName is the owner's name of the card: owner text, hostile until
	// proven otherwise, rendered as text and never as a header of its own.
	CardName string
	// Test marks a "send a test" message (Event is then SampleEvent's).
	Test bool
}

// Outcome is what one try gave: what the delivery log shows.
type Outcome struct {
	Delivered bool
	// Status is the HTTP status or the SMTP reply code; 0 when there was
	// none (no connection, refused before sending).
	Status  int
	Latency time.Duration
	// Class is "" when delivered; else a short machine word: one of the
	// egress classes or of the Class* constants below.
	Class string
	// Detail is one line for the log: never a URL's path or query (which
	// may hold a token), never a secret.
	Detail string
	// RetryAfter is a receiver's Retry-After (429 and 503, at most
	// retryAfterMax) or a rate limit's wait; 0 when none.
	RetryAfter time.Duration
}

// The classes of failure this package adds to egress's.
const (
	// ClassAnswer: the receiver answered, but not with a 2xx (a 3xx
	// included: no redirect is followed).
	ClassAnswer = "answer"
	// ClassKeyMismatch: the channel was made under a notify key other
	// than this node's, so this node can neither derive its secret nor
	// open its URL. It must not sign with a secret the receiver does not
	// hold; trying again on this node changes nothing.
	ClassKeyMismatch = "key_mismatch"
	// ClassSealedURL: the channel's sealed URL does not open under this
	// node's key although the fingerprints agree: it was altered or
	// sealed for another channel.
	ClassSealedURL = "sealed_url"
	// ClassSMTP: the relay refused (its reply code is Status), or does
	// not offer what this node requires of it (STARTTLS, AUTH PLAIN).
	ClassSMTP = "smtp"
	// ClassInvalidRecipient: the email address does not parse.
	ClassInvalidRecipient = "invalid_recipient"
	// ClassRateLimited is egress's: the account or the channel sent too
	// much lately (email is counted against the same kind of budgets).
	ClassRateLimited = string(egress.ClassRateLimited)
	// ClassTimeout and ClassConnection are egress's, and say the same of
	// the SMTP relay.
	ClassTimeout    = string(egress.ClassTimeout)
	ClassConnection = string(egress.ClassConnection)
)

// openURL opens a channel's sealed URL, or says why it may not be used
// here: made under another key (the fingerprints are not named: the owner
// can do nothing with them, and the operator finds them in the channel
// and in the node's key), or sealed for another channel, or altered.
func openURL(key *keys.Key, fingerprint, channelID, sealed string) (url string, refused Outcome, ok bool) {
	if fingerprint != key.Fingerprint() {
		return "", Outcome{Class: ClassKeyMismatch,
			Detail: "this channel was made under another notify key than this node's: every node of the cluster must be given the same --notify-key"}, false
	}
	url, err := key.Open(channelID, sealed)
	if errors.Is(err, keys.ErrWrongKey) {
		return "", Outcome{Class: ClassSealedURL,
			Detail: "the channel's URL does not open under this node's notify key: it was altered, or sealed for another channel"}, false
	}
	if err != nil {
		return "", Outcome{Class: ClassSealedURL, Detail: "the channel's URL is not a sealed value"}, false
	}
	return url, Outcome{}, true
}

// httpOutcome is the outcome of an egress Post that took latency
// (measured by the caller when egress gave no answer).
func httpOutcome(answer egress.Answer, err error, latency time.Duration, now time.Time) Outcome {
	if err != nil {
		out := Outcome{Class: ClassConnection, Detail: "the request failed", Latency: latency}
		var e *egress.Error
		if errors.As(err, &e) {
			out.Class, out.RetryAfter = string(e.Class), e.RetryAfter
			// e.Target is the URL without its path and query.
			out.Detail = oneLine(e.Target+": "+e.Detail, detailRunesMax)
		}
		return out
	}
	out := Outcome{Status: answer.Status, Latency: answer.Latency}
	if answer.Status >= 200 && answer.Status < 300 {
		out.Delivered = true
		return out
	}
	out.Class = ClassAnswer
	// Only the status: an answer's body may quote the request's path
	// (many frameworks' 404 pages do), which may hold a token.
	out.Detail = fmt.Sprintf("the receiver answered %d %s", answer.Status, http.StatusText(answer.Status))
	if answer.Status >= 300 && answer.Status < 400 {
		out.Detail += "; redirects are not followed"
	}
	if answer.Status == http.StatusTooManyRequests || answer.Status == http.StatusServiceUnavailable {
		out.RetryAfter = parseRetryAfter(answer.Header.Get("Retry-After"), now)
	}
	return out
}

// nowOf is clock's time, or the system's when there is no clock.
func nowOf(clock func() time.Time) time.Time {
	if clock == nil {
		return time.Now()
	}
	return clock()
}
