package send

import (
	"crypto/tls"
	"crypto/x509"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/addrwatch/addrwatch/actors"
	"github.com/addrwatch/addrwatch/notify/egress"
	"github.com/addrwatch/addrwatch/notify/keys"
)

// received is one request as a receiver got it.
type received struct {
	header http.Header
	body   []byte
	path   string
}

// receiver is an httptest TLS server that keeps every request and
// answers with answer (204 when nil).
type receiver struct {
	srv    *httptest.Server
	mu     sync.Mutex
	got    []received
	answer func(w http.ResponseWriter, r *http.Request)
}

func newReceiver(t *testing.T, answer func(w http.ResponseWriter, r *http.Request)) *receiver {
	t.Helper()
	rc := &receiver{answer: answer}
	rc.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.got = append(rc.got, received{header: r.Header.Clone(), body: body, path: r.URL.Path})
		rc.mu.Unlock()
		if rc.answer == nil {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		rc.answer(w, r)
	}))
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *receiver) requests() []received {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]received(nil), rc.got...)
}

// url is the receiver's URL with path: 127.0.0.1, which httptest's
// certificate names.
func (rc *receiver) url(path string) string { return rc.srv.URL + path }

// client is an egress client that trusts the receiver's certificate and
// may reach loopback (the operator's --notify-allow-private).
func (rc *receiver) client(t *testing.T, cfg egress.Config) *egress.Client {
	t.Helper()
	roots := x509.NewCertPool()
	roots.AddCert(rc.srv.Certificate())
	cfg.AllowPrivate = true
	cfg.TLS = &tls.Config{RootCAs: roots}
	c, err := egress.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func newKey(t *testing.T) *keys.Key {
	t.Helper()
	k, err := keys.Generate()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func seal(t *testing.T, k *keys.Key, channelID, url string) string {
	t.Helper()
	sealed, err := k.Seal(channelID, url)
	if err != nil {
		t.Fatal(err)
	}
	return sealed
}

// clock is a settable clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

// confirmedEvent is a tx_confirmed of 0.0015 BTC on a Space's card.
func confirmedEvent() actors.ChainEvent {
	return actors.ChainEvent{
		Seq: 7, At: time.Date(2026, 3, 1, 12, 30, 45, 500, time.UTC).UnixNano(),
		Kind: actors.ChainTxConfirmed, CardID: "card_9", SpaceID: "space_2",
		Address: "bcrt1qexampleaddress", TxID: "ab12cd34ef56ab12cd34ef56ab12cd34ef56ab12cd34ef56ab12cd34ef56ab12",
		Occurrence: 1, AmountSat: 150_000, Height: 812, BlockHash: "00ff00ff", Confirmations: 1,
	}
}

// hostileName is a card name that tries every way out of a header.
const hostileName = "Évil\r\nX-Injected: yes\r\n\r\n<script>alert(1)</script> =?utf-8?q?=0D=0AX-Q:_1?= \u202edlrow\u0000ñ"
