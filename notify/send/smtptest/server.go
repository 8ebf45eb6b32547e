// Package smtptest is an SMTP relay on loopback for tests (go-smtp): it
// offers STARTTLS with a self-signed certificate when asked, advertises
// AUTH PLAIN even in clear (so that a client that would send its password
// in clear is caught doing it), and keeps every message and every AUTH
// with whether it came over TLS.
package smtptest

import (
	"crypto/x509"
	"encoding/pem"
	"io"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"

	"github.com/addrwatch/addrwatch/chain/electrum/electrumtest"
)

// The credentials the relay accepts.
const (
	User     = "relay-user"
	Password = "relay-pa55word"
)

// Server is a relay that keeps what it is told.
type Server struct {
	// Addr is host:port on loopback.
	Addr string
	// CertPEM is the STARTTLS certificate (PEM), and Roots a pool that
	// trusts it; both nil without STARTTLS.
	CertPEM []byte
	Roots   *x509.CertPool

	mu       sync.Mutex
	messages []Message
	auths    []Auth
	rcptCode int
}

// Message is one message the relay took.
type Message struct {
	From, To string
	Data     []byte
	TLS      bool
}

// Auth is one AUTH PLAIN the relay was sent.
type Auth struct {
	TLS            bool
	User, Password string
}

// New starts a relay, with STARTTLS when startTLS, until the test ends.
func New(t testing.TB, startTLS bool) *Server {
	t.Helper()
	s := &Server{}
	srv := smtp.NewServer(smtp.BackendFunc(func(c *smtp.Conn) (smtp.Session, error) {
		return &session{s: s, conn: c}, nil
	}))
	srv.Domain = "relay.test"
	srv.AllowInsecureAuth = true
	srv.ReadTimeout, srv.WriteTimeout = 10*time.Second, 10*time.Second
	if startTLS {
		certPEM, cfg, err := electrumtest.SelfSigned("127.0.0.1")
		if err != nil {
			t.Fatal(err)
		}
		srv.TLSConfig = cfg
		block, _ := pem.Decode(certPEM)
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			t.Fatal(err)
		}
		s.CertPEM, s.Roots = certPEM, x509.NewCertPool()
		s.Roots.AddCert(cert)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.Addr = l.Addr().String()
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return s
}

// Received returns the messages and AUTHs so far.
func (s *Server) Received() ([]Message, []Auth) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.messages), slices.Clone(s.auths)
}

// RefuseRcpt makes the relay refuse every RCPT with code (0 accepts).
func (s *Server) RefuseRcpt(code int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rcptCode = code
}

type session struct {
	s      *Server
	conn   *smtp.Conn
	authed bool
	from   string
	to     string
}

func (ss *session) isTLS() bool {
	_, ok := ss.conn.TLSConnectionState()
	return ok
}

func (ss *session) AuthMechanisms() []string { return []string{sasl.Plain} }

func (ss *session) Auth(string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(_, user, password string) error {
		ss.s.mu.Lock()
		ss.s.auths = append(ss.s.auths, Auth{TLS: ss.isTLS(), User: user, Password: password})
		ss.s.mu.Unlock()
		if user != User || password != Password {
			return smtp.ErrAuthFailed
		}
		ss.authed = true
		return nil
	}), nil
}

func (ss *session) Mail(from string, _ *smtp.MailOptions) error {
	ss.from = from
	return nil
}

func (ss *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	ss.s.mu.Lock()
	code := ss.s.rcptCode
	ss.s.mu.Unlock()
	if code != 0 {
		return &smtp.SMTPError{Code: code, EnhancedCode: smtp.EnhancedCode{5, 1, 1}, Message: "no such mailbox"}
	}
	ss.to = to
	return nil
}

func (ss *session) Data(r io.Reader) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	ss.s.mu.Lock()
	ss.s.messages = append(ss.s.messages, Message{From: ss.from, To: ss.to, Data: data, TLS: ss.isTLS()})
	ss.s.mu.Unlock()
	return nil
}

func (ss *session) Reset()        {}
func (ss *session) Logout() error { return nil }
