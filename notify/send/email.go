package send

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/mail"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"

	"github.com/addrwatch/addrwatch/notify/egress"
)

// smtpTimeoutDefault bounds one whole SMTP exchange when the relay sets
// no Timeout: a relay that takes longer is down as far as a notification
// is concerned, and the deliverer tries again later.
const smtpTimeoutDefault = 30 * time.Second

// helloName is the name this node gives in EHLO, go-smtp's default: a
// node has no public name of its own to give.
const helloName = "localhost"

// smtpReplyOK is the relay's reply to a message it took (DATA's 250).
const smtpReplyOK = 250

// Email sends notifications through the operator's SMTP relay. The relay
// is the operator's, not an owner's, so it is dialled as configured (no
// egress checks); the recipient is the owner's, so each message is
// counted against the account's and the channel's budgets like an HTTP
// request.
type Email struct {
	Relay SMTPRelay
	// Limits are the budgets (egress.NewLimits); nil counts nothing.
	Limits *egress.Limits
	// Now is the clock of the Date header and of latencies; time.Now
	// when nil.
	Now func() time.Time
}

// SMTPRelay is the operator's relay.
type SMTPRelay struct {
	// Addr is host:port (587 for submission).
	Addr string
	// From is the sender, an address or "Name <address>".
	From string
	// Username and Password are for AUTH PLAIN, sent only over TLS; no
	// AUTH when Username is empty.
	Username string
	Password string
	// AllowPlaintext lets a relay that does not offer STARTTLS be used
	// in clear (a lab's). A relay that offers it is always used with it,
	// and the password is never sent in clear, whatever this says.
	AllowPlaintext bool
	// TLS is the base TLS configuration (RootCAs for a private CA); its
	// ServerName is Addr's host when empty.
	TLS *tls.Config
	// Timeout bounds the whole exchange; smtpTimeoutDefault when 0.
	Timeout time.Duration
}

// The relay refusals this node makes itself, before the relay could.
var (
	errNoSTARTTLS   = errors.New("the relay does not offer STARTTLS, and plain SMTP is not allowed")
	errAuthInClear  = errors.New("the relay offers no TLS, and the relay password is never sent in clear")
	errNoPlainAuth  = errors.New("the relay does not offer AUTH PLAIN")
	errFromUnusable = errors.New("the relay's From address does not parse")
)

// Send makes one try of d to the address to.
func (e *Email) Send(ctx context.Context, to string, d Delivery) Outcome {
	rcpt, err := mail.ParseAddress(to)
	if err != nil {
		return Outcome{Class: ClassInvalidRecipient, Detail: "the email address does not parse"}
	}
	from, err := mail.ParseAddress(e.Relay.From)
	if err != nil {
		return Outcome{Class: ClassSMTP, Detail: errFromUnusable.Error()}
	}
	if e.Limits != nil {
		if wait := e.Limits.Take(d.Account, d.ChannelID); wait > 0 {
			return Outcome{Class: ClassRateLimited, RetryAfter: wait,
				Detail: fmt.Sprintf("too many messages for this account or channel; try again in %s", wait)}
		}
	}
	start := e.now()
	// Only the address goes to the relay and into To: a display name
	// would be owner text in a header for nothing.
	msg := emailMessage(from, rcpt.Address, d, start)
	err = e.Relay.deliver(ctx, from.Address, rcpt.Address, msg)
	out := Outcome{Latency: e.now().Sub(start)}
	if err == nil {
		out.Delivered, out.Status = true, smtpReplyOK
		return out
	}
	out.Status, out.Class, out.Detail = classifySMTP(err)
	return out
}

func (e *Email) now() time.Time { return nowOf(e.Now) }

// deliver hands msg to the relay for to: STARTTLS (or plain, when allowed
// and not offered), AUTH PLAIN over TLS when configured, MAIL, RCPT,
// DATA. The message is delivered once DATA is answered 250; a failed QUIT
// after that changes nothing.
func (r SMTPRelay) deliver(ctx context.Context, from, to string, msg []byte) error {
	timeout := r.Timeout
	if timeout <= 0 {
		timeout = smtpTimeoutDefault
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	// Cancelling closes every connection dial opened (see dial).
	defer cancel()
	c, err := r.open(ctx, timeout)
	if err != nil {
		return contextOr(ctx, err)
	}
	defer c.Close()
	if r.Username != "" {
		if _, isTLS := c.TLSConnectionState(); !isTLS {
			return errAuthInClear
		}
		if !c.SupportsAuth(sasl.Plain) {
			return errNoPlainAuth
		}
		if err := c.Auth(sasl.NewPlainClient("", r.Username, r.Password)); err != nil {
			return contextOr(ctx, err)
		}
	}
	if err := c.SendMail(from, []string{to}, bytes.NewReader(msg)); err != nil {
		return contextOr(ctx, err)
	}
	c.Quit()
	return nil
}

// open connects to the relay and starts TLS. When that fails, a second
// connection asks the relay whether it offers STARTTLS at all: if it
// does, the failure stands (a relay that offers TLS is never used
// without it, or a man in the middle could break the handshake to read
// the mail); if it does not, the answer is errNoSTARTTLS, or, when plain
// SMTP is allowed, that second connection in clear.
func (r SMTPRelay) open(ctx context.Context, timeout time.Duration) (*smtp.Client, error) {
	conn, err := r.dial(ctx)
	if err != nil {
		return nil, err
	}
	c, tlsErr := smtp.NewClientStartTLS(conn, r.tlsConfig())
	if tlsErr == nil {
		setTimeouts(c, timeout)
		// The handshake happens at the first exchange after STARTTLS:
		// EHLO again now, so that a failed handshake is known here
		// rather than as the relay seeming to lack AUTH.
		if tlsErr = c.Hello(helloName); tlsErr == nil {
			return c, nil
		}
		c.Close()
	}
	if ctx.Err() != nil {
		return nil, tlsErr
	}
	conn, err = r.dial(ctx)
	if err != nil {
		return nil, err
	}
	c = smtp.NewClient(conn)
	setTimeouts(c, timeout)
	if err := c.Hello(helloName); err != nil {
		c.Close()
		return nil, err
	}
	if offered, _ := c.Extension("STARTTLS"); offered {
		c.Close()
		return nil, tlsErr
	}
	if !r.AllowPlaintext {
		c.Close()
		return nil, errNoSTARTTLS
	}
	return c, nil
}

// dial connects to the relay; the connection is closed when ctx ends, so
// a relay that stops answering mid-exchange cannot hold the try past its
// timeout (go-smtp's own deadlines are per command).
func (r SMTPRelay) dial(ctx context.Context) (net.Conn, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", r.Addr)
	if err != nil {
		return nil, err
	}
	context.AfterFunc(ctx, func() { conn.Close() })
	return conn, nil
}

func (r SMTPRelay) tlsConfig() *tls.Config {
	cfg := &tls.Config{}
	if r.TLS != nil {
		cfg = r.TLS.Clone()
	}
	cfg.MinVersion = max(cfg.MinVersion, tls.VersionTLS12)
	if cfg.ServerName == "" {
		if host, _, err := net.SplitHostPort(r.Addr); err == nil {
			cfg.ServerName = host
		}
	}
	return cfg
}

func setTimeouts(c *smtp.Client, timeout time.Duration) {
	c.CommandTimeout, c.SubmissionTimeout = timeout, timeout
}

// contextOr is ctx's end when it has ended (the connection was closed
// under the exchange because time ran out, whatever error that gave),
// and err otherwise.
func contextOr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

// classifySMTP is the status, class and detail of a failed exchange.
func classifySMTP(err error) (status int, class, detail string) {
	var reply *smtp.SMTPError
	var ne net.Error
	switch {
	case errors.As(err, &reply):
		return reply.Code, ClassSMTP, oneLine(fmt.Sprintf("the relay refused: %d %s", reply.Code, reply.Message), detailRunesMax)
	case errors.Is(err, errNoSTARTTLS), errors.Is(err, errAuthInClear), errors.Is(err, errNoPlainAuth):
		return 0, ClassSMTP, err.Error()
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return 0, ClassTimeout, "the relay did not answer in time"
	default:
		return 0, ClassConnection, oneLine(err.Error(), detailRunesMax)
	}
}
