package btcdsource

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/addrwatch/addrwatch/chain"
	"github.com/gorilla/websocket"
)

// Reaching btcd's websocket: where and how to dial it, and the
// connection a caller holds until it ends.

// wsEndpoint is how btcd's websocket is reached: TLS trusting the given
// certificate (sessions resumed), through the SOCKS5 proxy when there is
// one (chain.Reach), which resolves the host name itself, and the user
// and password as basic authorization on the upgrade.
type wsEndpoint struct {
	dialer *websocket.Dialer
	// url is wss://HOST:PORT/ws, without the user and password, so that
	// no error naming the URL can show them.
	url     string
	header  http.Header
	timeout time.Duration // the handshake's, and each request's
}

func newWSEndpoint(u *url.URL, tlsConfig *tls.Config, proxy *url.URL, timeout time.Duration) (*wsEndpoint, error) {
	dial, err := chain.Reach{Proxy: proxy}.DialContext()
	if err != nil {
		return nil, err
	}
	scheme := "wss"
	if u.Scheme == "http" {
		scheme = "ws"
	}
	password, _ := u.User.Password()
	auth := base64.StdEncoding.EncodeToString([]byte(u.User.Username() + ":" + password))
	return &wsEndpoint{
		dialer:  &websocket.Dialer{NetDialContext: dial, TLSClientConfig: tlsConfig, HandshakeTimeout: timeout},
		url:     (&url.URL{Scheme: scheme, Host: u.Host, Path: "/ws"}).String(),
		header:  http.Header{"Authorization": {"Basic " + auth}},
		timeout: timeout,
	}, nil
}

// dial opens a connection within ctx and the handshake timeout, whose
// messages from btcd may be max bytes at most. The caller starts its
// reading (read) and its pings (keepAlive).
func (e *wsEndpoint) dial(ctx context.Context, op string, max int64) (*wsConn, error) {
	ws, resp, err := e.dialer.DialContext(ctx, e.url, e.header)
	if resp != nil && resp.Body != nil {
		_ = resp.Body.Close()
	}
	if err != nil {
		ue := &chain.UpstreamError{Op: op, Err: err}
		switch {
		case ctx.Err() != nil:
			ue.Err = context.Cause(ctx)
		case errors.Is(err, websocket.ErrBadHandshake) && resp != nil:
			ue.Status = resp.StatusCode
			if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
				ue.Err = errRefusedCredentials
			}
		}
		return nil, ue
	}
	c := &wsConn{ws: ws, timeout: e.timeout, max: max, waiting: map[uint64]chan rpcAnswer{}, done: make(chan struct{})}
	c.heard.Store(time.Now().UnixNano())
	return c, nil
}

// heldConn is the connection requests go on until it ends, and
// whether its holder was closed for good.
type heldConn struct {
	mu     sync.Mutex
	conn   *wsConn // the newest connection; nil before the first
	closed bool
}

// current is the connection if it has not ended, and whether the
// holder was closed.
func (h *heldConn) current() (conn *wsConn, closed bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.conn == nil || !h.conn.live() {
		return nil, h.closed
	}
	return h.conn, h.closed
}

// replace makes conn the one held, and returns the one it replaces. A
// closed holder takes none: conn is closed and ok false.
func (h *heldConn) replace(conn *wsConn) (old *wsConn, ok bool) {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		conn.close(errClosed)
		return nil, false
	}
	old, h.conn = h.conn, conn
	h.mu.Unlock()
	return old, true
}

// close ends the connection held and refuses any later one.
func (h *heldConn) close() {
	h.mu.Lock()
	h.closed = true
	conn := h.conn
	h.mu.Unlock()
	if conn != nil {
		conn.close(errClosed)
	}
}
