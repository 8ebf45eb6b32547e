package send

import (
	"bytes"
	"context"
	"io"
	"mime"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/addrwatch/addrwatch/notify/egress"
)

const (
	emailChannelID = "ch_email_1"
	ownerAddress   = "owner@example.org"
)

var mailNow = time.Date(2026, 3, 1, 12, 31, 0, 0, time.UTC)

func emailDelivery(attempt int, name string) Delivery {
	return Delivery{Account: "acct_1", ChannelID: emailChannelID, Attempt: attempt, Event: confirmedEvent(), CardName: name}
}

func sendMail(t *testing.T, relay SMTPRelay, limits *egress.Limits, to string, d Delivery) Outcome {
	t.Helper()
	e := &Email{Relay: relay, Limits: limits, Now: func() time.Time { return mailNow }}
	return e.Send(context.Background(), to, d)
}

// readMessage parses a received message and decodes its body.
func readMessage(t *testing.T, data []byte) (*mail.Message, string) {
	t.Helper()
	msg, err := mail.ReadMessage(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("the message does not parse: %v\n%s", err, data)
	}
	body, err := io.ReadAll(quotedprintable.NewReader(msg.Body))
	if err != nil {
		t.Fatalf("the body is not quoted-printable: %v", err)
	}
	return msg, string(body)
}

// TestEmailThroughSTARTTLS: the message goes over TLS, after an AUTH
// PLAIN that also went over TLS, with the documented headers and body;
// a redelivery has the same event ID and another Message-ID.
func TestEmailThroughSTARTTLS(t *testing.T) {
	ms := newMailServer(t, true)
	for attempt := 1; attempt <= 2; attempt++ {
		if out := sendMail(t, ms.relay(), nil, ownerAddress, emailDelivery(attempt, "Savings")); !out.Delivered || out.Status != 250 || out.Class != "" {
			t.Fatalf("attempt %d: %+v", attempt, out)
		}
	}
	messages, auths := ms.received()
	if len(messages) != 2 || len(auths) != 2 {
		t.Fatalf("%d messages and %d AUTHs, want 2 and 2", len(messages), len(auths))
	}
	for _, a := range auths {
		if !a.TLS || a.User != relayUser || a.Password != relayPassword {
			t.Fatalf("AUTH %+v, want the relay's credentials over TLS", a)
		}
	}
	event := confirmedEvent()
	for i, m := range messages {
		if !m.TLS || m.From != "alerts@notify.example" || m.To != ownerAddress {
			t.Fatalf("message %d: tls %v from %q to %q", i+1, m.TLS, m.From, m.To)
		}
		msg, body := readMessage(t, m.Data)
		want := map[string]string{
			"From":                      `"addrwatch" <alerts@notify.example>`,
			"To":                        "<" + ownerAddress + ">",
			"Subject":                   "addrwatch: +0.00150000 BTC confirmed on Savings",
			"Date":                      "Sun, 01 Mar 2026 12:31:00 +0000",
			"Message-Id":                "<" + event.ID() + "." + string(rune('1'+i)) + "@notify.example>",
			"Mime-Version":              "1.0",
			"Content-Type":              "text/plain; charset=utf-8",
			"Content-Transfer-Encoding": "quoted-printable",
			"Auto-Submitted":            "auto-generated",
			EventIDHeader:               event.ID(),
			EventTypeHeader:             "tx_confirmed",
			DeliveryAttemptHeader:       string(rune('1' + i)),
		}
		for name, value := range want {
			if got := msg.Header.Get(name); got != value {
				t.Errorf("message %d %s: %q, want %q", i+1, name, got, value)
			}
		}
		for _, line := range []string{
			"+0.00150000 BTC confirmed in block 812 on Savings\r\n",
			"txid " + event.TxID + "\r\n",
			"event " + event.ID() + " (tx_confirmed) at 2026-03-01T12:30:45Z\r\n",
		} {
			if !strings.Contains(body, line) {
				t.Errorf("message %d: the body lacks %q:\n%s", i+1, line, body)
			}
		}
	}
}

// TestEmailRefusesARelayWithoutSTARTTLS: no STARTTLS, no message, unless
// plain SMTP is allowed; even then the password is never sent in clear.
func TestEmailRefusesARelayWithoutSTARTTLS(t *testing.T) {
	ms := newMailServer(t, false)
	relay := ms.relay()
	if out := sendMail(t, relay, nil, ownerAddress, emailDelivery(1, "Savings")); out.Delivered || out.Class != ClassSMTP || !strings.Contains(out.Detail, "STARTTLS") {
		t.Fatalf("plain relay: %+v, want refused with class %s", out, ClassSMTP)
	}
	relay.AllowPlaintext = true
	if out := sendMail(t, relay, nil, ownerAddress, emailDelivery(1, "Savings")); out.Delivered || out.Class != ClassSMTP || !strings.Contains(out.Detail, "password") {
		t.Fatalf("plain relay allowed, with a password: %+v, want refused with class %s", out, ClassSMTP)
	}
	if messages, auths := ms.received(); len(messages) != 0 || len(auths) != 0 {
		t.Fatalf("the relay got %d messages and AUTH %+v, want none", len(messages), auths)
	}
	relay.Username, relay.Password = "", ""
	if out := sendMail(t, relay, nil, ownerAddress, emailDelivery(1, "Savings")); !out.Delivered {
		t.Fatalf("plain relay allowed, no password: %+v", out)
	}
	if messages, auths := ms.received(); len(messages) != 1 || messages[0].TLS || len(auths) != 0 {
		t.Fatalf("the relay got %d messages and %d AUTHs, want 1 in clear and none", len(messages), len(auths))
	}
}

// TestEmailTLSFailureIsNotDowngraded: a relay that offers STARTTLS but
// whose certificate is not trusted is not used in clear, even where
// plain SMTP is allowed: breaking the handshake must not be a way to
// read the mail.
func TestEmailTLSFailureIsNotDowngraded(t *testing.T) {
	ms := newMailServer(t, true)
	relay := ms.relay()
	relay.TLS, relay.AllowPlaintext = nil, true
	out := sendMail(t, relay, nil, ownerAddress, emailDelivery(1, "Savings"))
	if out.Delivered || out.Class == "" || !strings.Contains(out.Detail, "certificate") {
		t.Fatalf("%+v, want a certificate failure", out)
	}
	if messages, auths := ms.received(); len(messages) != 0 || len(auths) != 0 {
		t.Fatalf("the relay got %d messages and %d AUTHs, want none", len(messages), len(auths))
	}
}

// TestEmailHostileCardNameAddsNoHeader: the message has exactly the
// documented headers, and the Subject decodes to one line.
func TestEmailHostileCardNameAddsNoHeader(t *testing.T) {
	ms := newMailServer(t, true)
	// The owner's display name is owner text too: only the address is used.
	if out := sendMail(t, ms.relay(), nil, `"Ow\"ner" <`+ownerAddress+`>`, emailDelivery(1, hostileName)); !out.Delivered {
		t.Fatalf("%+v", out)
	}
	messages, _ := ms.received()
	msg, body := readMessage(t, messages[0].Data)
	if to := msg.Header.Get("To"); to != "<"+ownerAddress+">" || messages[0].To != ownerAddress {
		t.Fatalf("To %q, RCPT %q, want the address alone", to, messages[0].To)
	}
	var names []string
	for name := range msg.Header {
		names = append(names, name)
	}
	slices.Sort(names)
	want := []string{"Addrwatch-Delivery-Attempt", "Addrwatch-Event-Id", "Addrwatch-Event-Type", "Auto-Submitted",
		"Content-Transfer-Encoding", "Content-Type", "Date", "From", "Message-Id", "Mime-Version", "Subject", "To"}
	if !slices.Equal(names, want) {
		t.Fatalf("headers %v, want %v", names, want)
	}
	subject, err := new(mime.WordDecoder).DecodeHeader(msg.Header.Get("Subject"))
	if err != nil || strings.ContainsAny(subject, "\r\n\x00\u202e") || !strings.Contains(subject, "Évil X-Injected: yes <script>") {
		t.Fatalf("the Subject decodes to %q (%v)", subject, err)
	}
	if !strings.Contains(body, "on Évil X-Injected: yes <script>alert(1)</script>") || strings.Contains(body, "\u202e") {
		t.Fatalf("the body does not hold the name as one line of text:\n%s", body)
	}
}

// TestEmailRelayRefusal: the relay's reply code and words reach the log.
func TestEmailRelayRefusal(t *testing.T) {
	ms := newMailServer(t, true)
	ms.RefuseRcpt(550)
	out := sendMail(t, ms.relay(), nil, ownerAddress, emailDelivery(1, "Savings"))
	if out.Delivered || out.Status != 550 || out.Class != ClassSMTP || !strings.Contains(out.Detail, "no such mailbox") {
		t.Fatalf("%+v, want 550 with class %s", out, ClassSMTP)
	}
}

// TestEmailInvalidRecipient: an address that does not parse (a header
// smuggled in it, say) is refused before the relay is dialled.
func TestEmailInvalidRecipient(t *testing.T) {
	ms := newMailServer(t, true)
	for _, to := range []string{"owner@example.org\r\nBcc: thief@example.com", "not an address", ""} {
		if out := sendMail(t, ms.relay(), nil, to, emailDelivery(1, "Savings")); out.Delivered || out.Class != ClassInvalidRecipient {
			t.Errorf("%q: %+v, want %s", to, out, ClassInvalidRecipient)
		}
	}
	if messages, _ := ms.received(); len(messages) != 0 {
		t.Fatalf("the relay got %d messages", len(messages))
	}
}

// TestEmailRateLimited: email counts against the channel's budget.
func TestEmailRateLimited(t *testing.T) {
	ms := newMailServer(t, true)
	limits := egress.NewLimits(egress.AccountRateDefault, egress.Rate{PerSecond: 1, Burst: 1}, func() time.Time { return mailNow })
	if out := sendMail(t, ms.relay(), limits, ownerAddress, emailDelivery(1, "Savings")); !out.Delivered {
		t.Fatalf("first: %+v", out)
	}
	out := sendMail(t, ms.relay(), limits, ownerAddress, emailDelivery(1, "Savings"))
	if out.Delivered || out.Class != ClassRateLimited || out.RetryAfter != time.Second {
		t.Fatalf("second: %+v, want %s after 1s", out, ClassRateLimited)
	}
	if messages, _ := ms.received(); len(messages) != 1 {
		t.Fatalf("the relay got %d messages, want 1", len(messages))
	}
}

// TestEmailSilentRelayTimesOut: a relay that accepts the connection and
// never greets costs the relay's timeout.
func TestEmailSilentRelayTimesOut(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	relay := SMTPRelay{Addr: l.Addr().String(), From: "alerts@notify.example", Timeout: 300 * time.Millisecond}
	start := time.Now()
	out := sendMail(t, relay, nil, ownerAddress, emailDelivery(1, "Savings"))
	if out.Delivered || out.Class != ClassTimeout {
		t.Fatalf("%+v, want %s", out, ClassTimeout)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("a 300 ms timeout took %s", took)
	}
}
