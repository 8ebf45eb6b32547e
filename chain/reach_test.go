package chain

import (
	"context"
	"encoding/binary"
	"encoding/pem"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"sync"
	"testing"
)

// An Esplora behind a self-signed certificate is reached when the
// certificate is given (--chain-cert), and refused when it is not.
func TestAClientTrustsTheGivenCertificate(t *testing.T) {
	srv := httptest.NewTLSServer(blocksHandler())
	defer srv.Close()
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})

	trusting, err := NewClient(srv.URL, ClientOptions{Retries: -1, Reach: Reach{CertPEM: certPEM}})
	if err != nil {
		t.Fatal(err)
	}
	if tip, err := trusting.Tip(context.Background()); err != nil || tip.Height != 7 {
		t.Errorf("with the certificate: %+v, %v", tip, err)
	}
	untrusting, _ := NewClient(srv.URL, ClientOptions{Retries: -1})
	if _, err := untrusting.Tip(context.Background()); !errors.Is(err, ErrUpstream) {
		t.Errorf("without the certificate: %v, want the TLS failure", err)
	}
	if _, err := NewClient(srv.URL, ClientOptions{Reach: Reach{CertPEM: []byte("not a certificate")}}); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("a certificate file without a certificate: %v", err)
	}
}

// Through --chain-proxy every connection goes to the SOCKS5 proxy, which
// is given the source's host name to resolve: a name this machine cannot
// resolve (an .onion's, here one under .invalid) still works.
func TestAClientGoesThroughTheSOCKS5Proxy(t *testing.T) {
	srv := httptest.NewServer(blocksHandler())
	defer srv.Close()
	proxyAddr, asked := socks5Server(t, srv.Listener.Addr().String())
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	c, err := NewClient("http://explorer.invalid:"+port, ClientOptions{Retries: -1, Reach: Reach{Proxy: &url.URL{Scheme: "socks5", Host: proxyAddr}}})
	if err != nil {
		t.Fatal(err)
	}
	if tip, err := c.Tip(context.Background()); err != nil || tip.Height != 7 {
		t.Fatalf("through the proxy: %+v, %v", tip, err)
	}
	if got := asked(); len(got) == 0 || got[0] != "explorer.invalid:"+port {
		t.Errorf("the proxy was asked for %v, want the source's name", got)
	}
}

// blocksHandler answers /blocks with a tip at height 7.
func blocksHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `[{"id":"`+fakeHash+`","height":7}]`)
	})
}

// socks5Server is a SOCKS5 proxy (no authentication, CONNECT by name)
// that connects every request to target, and records what it was asked.
func socks5Server(t *testing.T, target string) (addr string, asked func() []string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var mu sync.Mutex
	var names []string
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				name, ok := socks5Handshake(conn)
				if !ok {
					return
				}
				mu.Lock()
				names = append(names, name)
				mu.Unlock()
				up, err := net.Dial("tcp", target)
				if err != nil {
					return
				}
				defer up.Close()
				_, _ = conn.Write([]byte{5, 0, 0, 1, 0, 0, 0, 0, 0, 0})
				go func() { _, _ = io.Copy(up, conn) }()
				_, _ = io.Copy(conn, up)
			}()
		}
	}()
	return ln.Addr().String(), func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), names...) }
}

// socks5Handshake reads a client's greeting and CONNECT request and
// returns the host:port it asked for; only a domain name is accepted.
func socks5Handshake(conn net.Conn) (string, bool) {
	head := make([]byte, 2)
	if _, err := io.ReadFull(conn, head); err != nil || head[0] != 5 {
		return "", false
	}
	if _, err := io.ReadFull(conn, make([]byte, head[1])); err != nil {
		return "", false
	}
	_, _ = conn.Write([]byte{5, 0}) // no authentication
	req := make([]byte, 5)
	if _, err := io.ReadFull(conn, req); err != nil || req[1] != 1 || req[3] != 3 {
		return "", false // CONNECT to a domain name only
	}
	name := make([]byte, int(req[4])+2)
	if _, err := io.ReadFull(conn, name); err != nil {
		return "", false
	}
	port := binary.BigEndian.Uint16(name[len(name)-2:])
	return string(name[:len(name)-2]) + ":" + strconv.Itoa(int(port)), true
}
