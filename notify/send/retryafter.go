package send

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// retryAfterMax bounds a receiver's Retry-After: the deliverer gives up
// on an event after a day, so a longer wait says nothing more, and a
// receiver must not be able to park a delivery for years.
const retryAfterMax = 24 * time.Hour

// parseRetryAfter reads a Retry-After value (RFC 9110 §10.2.3): a number
// of seconds or an HTTP date, taken relative to now. Anything else, a
// date in the past, or a negative number is 0: no wait asked for.
func parseRetryAfter(value string, now time.Time) time.Duration {
	value = strings.TrimSpace(value)
	if value == "" {
		return 0
	}
	if isDigits(value) {
		seconds, err := strconv.ParseInt(value, 10, 64)
		if err != nil || seconds > int64(retryAfterMax/time.Second) {
			// Too many digits for an int64 is longer than the bound too.
			return retryAfterMax
		}
		return time.Duration(seconds) * time.Second
	}
	at, err := http.ParseTime(value)
	if err != nil {
		return 0
	}
	return min(max(at.Sub(now), 0), retryAfterMax)
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}
