package send

import (
	"bytes"
	"fmt"
	"mime/quotedprintable"
	"net/mail"
	"strconv"
	"strings"
	"time"
)

// messageIDDomainFallback is the Message-ID's domain when the relay's
// From has none usable (".invalid" is reserved never to resolve).
const messageIDDomainFallback = "addrwatch.invalid"

// emailMessage is the whole message for d: headers, a blank line, and a
// plain-text body in quoted-printable (7-bit safe whatever the card's
// name holds, and no line longer than 76 characters).
//
// Every header value is either the operator's (From), an address the
// relay will be given as it is (To), ours (the IDs, the date), or owner
// text made one line and RFC 2047 encoded (Subject): none can start a
// header of its own.
func emailMessage(from *mail.Address, to string, d Delivery, now time.Time) []byte {
	var b bytes.Buffer
	header := func(name, value string) { b.WriteString(name + ": " + value + "\r\n") }
	header("From", from.String())
	header("To", (&mail.Address{Address: to}).String())
	header("Subject", headerValue(title(d), ntfyTitleRunesMax))
	header("Date", now.Format(time.RFC1123Z))
	header("Message-ID", messageID(d, from.Address))
	header("MIME-Version", "1.0")
	header("Content-Type", "text/plain; charset=utf-8")
	header("Content-Transfer-Encoding", "quoted-printable")
	// RFC 3834: no vacation responder should answer a notification.
	header("Auto-Submitted", "auto-generated")
	header(EventIDHeader, oneLine(d.Event.ID(), 64))
	header(EventTypeHeader, oneLine(string(d.Event.Kind), 32))
	header(DeliveryAttemptHeader, strconv.Itoa(d.Attempt))
	b.WriteString("\r\n")
	qp := quotedprintable.NewWriter(&b)
	qp.Write([]byte(joinLines(emailLines(d), "\r\n")))
	qp.Close()
	return b.Bytes()
}

// emailLines are the body's lines: the event's, its ID and time, and why
// the reader gets it.
func emailLines(d Delivery) []string {
	lines := messageLines(d)
	lines = append(lines,
		"",
		"event "+oneLine(d.Event.ID(), 64)+" ("+oneLine(string(d.Event.Kind), 32)+") at "+eventTime(d.Event).Format(time.RFC3339),
		"",
		"-- ",
		"You get this message because a notification channel of an addrwatch account sends email to this address.",
	)
	return lines
}

// messageID names this try of this event: the event's ID and the
// attempt, so a reader (or a filter) can tell a redelivery from a new
// event. Both are ours: hex and digits, valid in a Message-ID as they
// are.
func messageID(d Delivery, from string) string {
	domain := messageIDDomainFallback
	if at := strings.LastIndexByte(from, '@'); at >= 0 && isDotAtom(from[at+1:]) {
		domain = from[at+1:]
	}
	return fmt.Sprintf("<%s.%d@%s>", oneLine(d.Event.ID(), 64), d.Attempt, domain)
}

// isDotAtom reports whether s is a plain domain (letters, digits, '-'
// and '.'), the only kind a Message-ID is given here.
func isDotAtom(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}
