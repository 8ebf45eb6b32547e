package send

import (
	"context"
	"net/http"
	"time"

	"github.com/addrwatch/addrwatch/notify/egress"
	"github.com/addrwatch/addrwatch/notify/keys"
)

// Bounds of an ntfy message. ntfy turns a body over 4096 bytes into an
// attachment; ours stays far below.
const (
	ntfyTitleRunesMax = 160
	ntfyBodyBytesMax  = 2048
)

// ntfy's priorities by name (its docs: min, low, default, high, max).
const (
	ntfyPriorityDefault = "default"
	ntfyPriorityHigh    = "high"
)

// Ntfy publishes to owners' ntfy topics: a POST of plain text to the
// topic's URL, with ntfy's Title, Tags and Priority headers.
type Ntfy struct {
	HTTP *egress.Client
	Key  *keys.Key
	// Now is the clock of Retry-After dates; time.Now when nil.
	Now func() time.Time
}

// NtfyChannel is an ntfy channel as the replicated state holds it: its
// topic URL (which may be the topic's only password) sealed.
type NtfyChannel struct {
	SealedURL      string
	KeyFingerprint string
}

// Send makes one try of d to ch's topic.
func (n *Ntfy) Send(ctx context.Context, ch NtfyChannel, d Delivery) Outcome {
	url, refused, ok := openURL(n.Key, ch.KeyFingerprint, d.ChannelID, ch.SealedURL)
	if !ok {
		return refused
	}
	start := n.now()
	answer, err := n.HTTP.Post(ctx, egress.Request{URL: url, Account: d.Account, Endpoint: d.ChannelID,
		Header: ntfyHeader(d), Body: ntfyBody(d)})
	return httpOutcome(answer, err, n.now().Sub(start), n.now())
}

// ntfyHeader is the request's headers. The title holds the card's name,
// owner text, so it goes through headerValue: one line, RFC 2047 when not
// ASCII (ntfy decodes it), bounded.
func ntfyHeader(d Delivery) http.Header {
	words := wordsFor(d.Event.Kind)
	tags := words.tag + "," + string(d.Event.Kind)
	if d.Test {
		tags += ",test"
	}
	priority := ntfyPriorityDefault
	if words.urgent {
		priority = ntfyPriorityHigh
	}
	h := http.Header{}
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("Title", headerValue(title(d), ntfyTitleRunesMax))
	// The kind is one of ours or a newer node's: made header-safe all
	// the same, it is not checked against a list here.
	h.Set("Tags", headerValue(tags, 100))
	h.Set("Priority", priority)
	return h
}

// ntfyBody is the message: the event's lines as plain text (ntfy shows
// it as is; no Markdown header is sent, so nothing in it is markup).
func ntfyBody(d Delivery) []byte {
	body := joinLines(messageLines(d), "\n")
	if len(body) > ntfyBodyBytesMax {
		// Every line is bounded, so this is a programmer's error.
		panic("send: an ntfy body is over ntfyBodyBytesMax")
	}
	return []byte(body)
}

func (n *Ntfy) now() time.Time { return nowOf(n.Now) }
