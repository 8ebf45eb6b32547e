package btcdsource

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/addrwatch/addrwatch/chain"
	"github.com/addrwatch/addrwatch/chain/sourcetest"
	"github.com/addrwatch/addrwatch/internal/regtest"
	"github.com/addrwatch/addrwatch/internal/testaddr"
	"github.com/gorilla/websocket"
)

const secret = "hunter2-not-for-logs"

// openAt is a mainnet Source for the btcd at rawURL.
func openAt(t *testing.T, rawURL string, opts Options) *Source {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	src, err := Open(chain.SourceSpec{Kind: chain.SourceBtcd, URL: u}, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	return src
}

// fakeBtcd answers every JSON-RPC request on its websocket with result,
// and counts them.
func fakeBtcd(t *testing.T, result string) (*httptest.Server, *atomic.Int64) {
	var hits atomic.Int64
	srv := wsServer(t, func(ws *websocket.Conn, msg []byte) {
		hits.Add(1)
		var req struct{ ID json.RawMessage }
		_ = json.Unmarshal(msg, &req)
		_ = ws.WriteMessage(websocket.TextMessage, []byte(`{"result":`+result+`,"error":null,"id":`+string(req.ID)+`}`))
	})
	return srv, &hits
}

// silentBtcd takes the websocket and every request on it, and answers
// none.
func silentBtcd(t *testing.T) *httptest.Server {
	return wsServer(t, func(*websocket.Conn, []byte) {})
}

// wsServer is a websocket server at /ws that hands each message to
// serve, on the connection's one reading goroutine.
func wsServer(t *testing.T, serve func(ws *websocket.Conn, msg []byte)) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := (&websocket.Upgrader{}).Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer ws.Close()
		for {
			_, msg, err := ws.ReadMessage()
			if err != nil {
				return
			}
			serve(ws, msg)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// A btcd that refuses connections, or takes longer than the timeout, is
// down: an UpstreamError that opens the breaker, naming no password.
func TestAnUnreachableOrSilentBtcdIsDown(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedPort := l.Addr().String()
	l.Close()
	silent := silentBtcd(t)

	for name, src := range map[string]*Source{
		"refusing": openAt(t, "http://user:"+secret+"@"+closedPort, Options{}),
		"silent":   openAt(t, "http://user:"+secret+"@"+strings.TrimPrefix(silent.URL, "http://"), Options{Timeout: 50 * time.Millisecond}),
	} {
		_, err := src.AddressStats(context.Background(), testaddr.P2PKH(name))
		var ue *chain.UpstreamError
		if !errors.As(err, &ue) || ue.Status != 0 || strings.Contains(err.Error(), secret) {
			t.Errorf("%s: %v, want an UpstreamError without a status or the password", name, err)
		}
		if slow := (timeoutError{}); name == "silent" && !errors.As(err, &slow) {
			t.Errorf("silent: %v, want a timeout", err)
		}
		if page, err := chain.NewHistoryCache(src, time.Minute, nil, 4).Page(context.Background(), testaddr.P2PKH(name), 0, 25, false); !errors.Is(err, chain.ErrUpstream) {
			t.Errorf("%s: History served %d transactions (%v), want it degraded", name, len(page.Txs), err)
		}
		if !sourcetest.BreakerOpens(t, src) {
			t.Errorf("%s: the breaker stays closed", name)
		}
	}
}

// The caller's own deadline says nothing of btcd: it is no timeout of
// the source, and does not open the breaker.
func TestTheCallersDeadlineIsNotTheSources(t *testing.T) {
	silent := silentBtcd(t)
	src := openAt(t, "http://user:pass@"+strings.TrimPrefix(silent.URL, "http://"), Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err := src.Tip(ctx)
	if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, chain.ErrUpstream) {
		t.Errorf("%v, want the caller's deadline inside an UpstreamError", err)
	}
}

// An answer that makes no sense is about what was asked: an
// UpstreamError, but the breaker stays closed and btcd is asked again
// for other addresses.
func TestAMalformedAnswerDoesNotOpenTheBreaker(t *testing.T) {
	for name, result := range map[string]string{
		"a txid that is no txid":       `[{"txid":"xyz","vin":[],"vout":[]}]`,
		"an input without its prevout": `[{"txid":"` + strings.Repeat("ab", 32) + `","vin":[{"txid":"` + strings.Repeat("cd", 32) + `","vout":0}],"vout":[]}]`,
		"a negative value":             `[{"txid":"` + strings.Repeat("ab", 32) + `","vin":[],"vout":[{"value":-1,"n":0,"scriptPubKey":{}}]}]`,
		"confirmed without a block":    `[{"txid":"` + strings.Repeat("ab", 32) + `","blockhash":"nothex","vin":[],"vout":[]}]`,
		"no list":                      `{"txid":"x"}`,
	} {
		srv, hits := fakeBtcd(t, result)
		src := openAt(t, "http://user:pass@"+strings.TrimPrefix(srv.URL, "http://"), Options{})
		if sourcetest.BreakerOpens(t, src) || hits.Load() != 4 {
			t.Errorf("%s: the breaker opened (btcd asked %d times of 4)", name, hits.Load())
		}
	}
}

// A wrong password is btcd's 401, to the reads and to the
// notifications; neither it nor the right one shows in an error or in
// the source's String.
func TestThePasswordIsNeverShown(t *testing.T) {
	n := regtest.Shared(t)
	r := n.RPC()
	u := r.URL()
	u.User = url.UserPassword(r.User, secret)
	src, err := Open(chain.SourceSpec{Kind: chain.SourceBtcd, URL: u}, Options{Network: chain.Regtest, Cert: r.Cert})
	if err != nil {
		t.Fatal(err)
	}
	_, err = src.Tip(context.Background())
	var ue *chain.UpstreamError
	if !errors.As(err, &ue) || ue.Status != http.StatusUnauthorized {
		t.Fatalf("a wrong password: %v, want btcd's 401", err)
	}
	_, notifyErr := src.Notify(context.Background())
	if !errors.As(notifyErr, &ue) || ue.Status != http.StatusUnauthorized || !errors.Is(notifyErr, errRefusedCredentials) {
		t.Fatalf("notifications with a wrong password: %v, want btcd's 401", notifyErr)
	}
	// The harness's own password is "pass", a word errors may well use.
	for _, shown := range []string{err.Error(), notifyErr.Error(), src.String(), open(t, n, Options{}).String()} {
		if strings.Contains(shown, secret) || strings.Contains(shown, ":"+r.Password+"@") {
			t.Errorf("%q shows a password", shown)
		}
	}
	if s := src.String(); !strings.HasPrefix(s, "btcd:https://") || !strings.Contains(s, "xxxxx") {
		t.Errorf("String() = %q, want the spec with the password masked", s)
	}
}

// Open refuses what it cannot use, without repeating the password.
func TestOpenRefusesWhatItCannotUse(t *testing.T) {
	parse := func(raw string) *url.URL { u, _ := url.Parse(raw); return u }
	good := parse("https://user:" + secret + "@127.0.0.1:18334")
	for name, c := range map[string]struct {
		spec chain.SourceSpec
		opts Options
	}{
		"another kind":               {chain.SourceSpec{Kind: chain.SourceEsplora, URL: good}, Options{}},
		"no password":                {chain.SourceSpec{Kind: chain.SourceBtcd, URL: parse("https://user@127.0.0.1:18334")}, Options{}},
		"no port":                    {chain.SourceSpec{Kind: chain.SourceBtcd, URL: parse("https://user:" + secret + "@127.0.0.1")}, Options{}},
		"plain http off loopback":    {chain.SourceSpec{Kind: chain.SourceBtcd, URL: parse("http://user:" + secret + "@btcd.example:8334")}, Options{}},
		"a certificate that is none": {chain.SourceSpec{Kind: chain.SourceBtcd, URL: good}, Options{Cert: []byte("not a PEM")}},
		"a certificate for http":     {chain.SourceSpec{Kind: chain.SourceBtcd, URL: parse("http://user:" + secret + "@127.0.0.1:18334")}, Options{Cert: regtestCert(t)}},
		"an http proxy":              {chain.SourceSpec{Kind: chain.SourceBtcd, URL: good}, Options{Proxy: "http://127.0.0.1:9050"}},
		"a proxy without port":       {chain.SourceSpec{Kind: chain.SourceBtcd, URL: good}, Options{Proxy: "socks5://127.0.0.1"}},
	} {
		_, err := Open(c.spec, c.opts)
		if !errors.Is(err, chain.ErrInvalidArgument) || strings.Contains(err.Error(), secret) {
			t.Errorf("%s: %v, want ErrInvalidArgument without the password", name, err)
		}
	}
	src := openAt(t, good.String(), Options{})
	for _, addr := range []string{"bcrt1qq704836psa54u44a5g36gv9lc6y46c8mnrawka", "BC1QAR0SRRR7XFKVY5L643LYDNW9RE59GTZZWF5MDQ", "", "nope"} {
		if _, err := src.AddressStats(context.Background(), addr); !errors.Is(err, chain.ErrInvalidArgument) {
			t.Errorf("a mainnet source asked about %q: %v, want ErrInvalidArgument", addr, err)
		}
	}
}

// regtestCert is a PEM certificate, any.
func regtestCert(t *testing.T) []byte {
	t.Helper()
	return regtest.Shared(t).RPC().Cert
}
