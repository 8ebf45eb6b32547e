package send

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"

	"github.com/addrwatch/addrwatch/chain/electrum/electrumtest"
)

const (
	relayUser     = "relay-user"
	relayPassword = "relay-pa55word"
)

// mailServer is a go-smtp server on loopback that keeps what it is told:
// the messages, and each AUTH with whether it came over TLS.
type mailServer struct {
	addr  string
	roots *x509.CertPool // trusts the server's certificate

	mu       sync.Mutex
	messages []mailReceived
	auths    []authSeen
	rcptCode int // a code to refuse RCPT with; 0 accepts
}

type mailReceived struct {
	from, to string
	data     []byte
	tls      bool
}

type authSeen struct {
	tls            bool
	user, password string
}

// newMailServer starts a server that offers STARTTLS when startTLS, and
// advertises AUTH PLAIN even in clear (AllowInsecureAuth) so that a
// client that would send its password in clear is caught doing it.
func newMailServer(t *testing.T, startTLS bool) *mailServer {
	t.Helper()
	ms := &mailServer{}
	srv := smtp.NewServer(smtp.BackendFunc(func(c *smtp.Conn) (smtp.Session, error) {
		return &mailSession{ms: ms, conn: c}, nil
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
		ms.roots = x509.NewCertPool()
		ms.roots.AddCert(cert)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ms.addr = l.Addr().String()
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return ms
}

func (ms *mailServer) received() ([]mailReceived, []authSeen) {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	return append([]mailReceived(nil), ms.messages...), append([]authSeen(nil), ms.auths...)
}

// relay is the sender's settings for this server.
func (ms *mailServer) relay() SMTPRelay {
	r := SMTPRelay{Addr: ms.addr, From: "addrwatch <alerts@notify.example>", Username: relayUser, Password: relayPassword, Timeout: 5 * time.Second}
	if ms.roots != nil {
		r.TLS = &tls.Config{RootCAs: ms.roots}
	}
	return r
}

type mailSession struct {
	ms     *mailServer
	conn   *smtp.Conn
	authed bool
	from   string
	to     string
}

func (s *mailSession) isTLS() bool {
	_, ok := s.conn.TLSConnectionState()
	return ok
}

func (s *mailSession) AuthMechanisms() []string { return []string{sasl.Plain} }

func (s *mailSession) Auth(string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(_, user, password string) error {
		s.ms.mu.Lock()
		s.ms.auths = append(s.ms.auths, authSeen{tls: s.isTLS(), user: user, password: password})
		s.ms.mu.Unlock()
		if user != relayUser || password != relayPassword {
			return smtp.ErrAuthFailed
		}
		s.authed = true
		return nil
	}), nil
}

func (s *mailSession) Mail(from string, _ *smtp.MailOptions) error {
	s.from = from
	return nil
}

func (s *mailSession) Rcpt(to string, _ *smtp.RcptOptions) error {
	s.ms.mu.Lock()
	code := s.ms.rcptCode
	s.ms.mu.Unlock()
	if code != 0 {
		return &smtp.SMTPError{Code: code, EnhancedCode: smtp.EnhancedCode{5, 1, 1}, Message: "no such mailbox"}
	}
	s.to = to
	return nil
}

func (s *mailSession) Data(r io.Reader) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	s.ms.mu.Lock()
	s.ms.messages = append(s.ms.messages, mailReceived{from: s.from, to: s.to, data: data, tls: s.isTLS()})
	s.ms.mu.Unlock()
	return nil
}

func (s *mailSession) Reset()        {}
func (s *mailSession) Logout() error { return nil }
