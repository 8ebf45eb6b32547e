package send

import (
	"crypto/tls"
	"testing"
	"time"

	"github.com/addrwatch/addrwatch/notify/send/smtptest"
)

const (
	relayUser     = smtptest.User
	relayPassword = smtptest.Password
)

// mailServer is a go-smtp relay on loopback that keeps what it is told
// (smtptest), with STARTTLS when asked.
type mailServer struct{ *smtptest.Server }

func newMailServer(t *testing.T, startTLS bool) *mailServer {
	t.Helper()
	return &mailServer{smtptest.New(t, startTLS)}
}

func (ms *mailServer) received() ([]smtptest.Message, []smtptest.Auth) { return ms.Received() }

// relay is the sender's settings for this server.
func (ms *mailServer) relay() SMTPRelay {
	r := SMTPRelay{Addr: ms.Addr, From: "addrwatch <alerts@notify.example>", Username: relayUser, Password: relayPassword, Timeout: 5 * time.Second}
	if ms.Roots != nil {
		r.TLS = &tls.Config{RootCAs: ms.Roots}
	}
	return r
}
