package chain

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/addrwatch/addrwatch/internal/socks5test"
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
	proxyAddr, asked := socks5test.Serve(t, srv.Listener.Addr().String())
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

// A pinned certificate (--chain-cert) is taken whatever names it carries,
// as an owner's node signs its own for names it chose; a certificate that
// is neither pinned nor valid for the name is refused.
func TestAPinnedCertificateNeedsNoMatchingName(t *testing.T) {
	srv := httptest.NewTLSServer(blocksHandler()) // its certificate names example.com and 127.0.0.1
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	proxyAddr, _ := socks5test.Serve(t, srv.Listener.Addr().String())
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	viaName := func(pin []byte) error {
		c, err := NewClient("https://mynode.invalid:"+port, ClientOptions{Retries: -1,
			Reach: Reach{CertPEM: pin, Proxy: &url.URL{Scheme: "socks5", Host: proxyAddr}}})
		if err != nil {
			return err
		}
		_, err = c.Tip(context.Background())
		return err
	}
	if err := viaName(certPEM); err != nil {
		t.Errorf("the pinned certificate under another name: %v", err)
	}
	if err := viaName(selfSignedPEM(t)); !errors.Is(err, ErrUpstream) {
		t.Errorf("a certificate other than the pinned one: %v, want refused", err)
	}
}

// selfSignedPEM is a certificate of a key of its own, for mynode.invalid.
func selfSignedPEM(t *testing.T) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), DNSNames: []string{"mynode.invalid"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}
