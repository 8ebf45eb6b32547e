package chain

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"

	"golang.org/x/net/proxy"
)

// Reach is how the server reaches a chain source across the network: a
// certificate to trust beside the system's roots (--chain-cert: btcd's
// self-signed RPC certificate, an Electrum server's), and a SOCKS5 proxy
// every connection goes through (--chain-proxy: Tor). The zero Reach
// dials directly and trusts the system's roots.
type Reach struct {
	CertPEM []byte
	Proxy   *url.URL
}

// TLSConfig is the TLS of a connection to serverName: TLS 1.2 or later,
// the system's roots and CertPEM's certificates. A server that presents
// exactly one of CertPEM's certificates is taken whatever names it
// carries: an owner's node (btcd's rpc.cert, an Umbrel's electrs) signs
// its own certificate for names it chose, and the operator pinned that
// very certificate. Any other certificate must chain to a root and name
// serverName, as usual.
func (r Reach) TLSConfig(serverName string) (*tls.Config, error) {
	cfg := &tls.Config{ServerName: serverName, MinVersion: tls.VersionTLS12}
	if len(r.CertPEM) == 0 {
		return cfg, nil
	}
	roots, err := x509.SystemCertPool()
	if err != nil || roots == nil {
		roots = x509.NewCertPool()
	}
	pinned, err := parseCertificates(r.CertPEM)
	if err != nil {
		return nil, err
	}
	for _, c := range pinned {
		roots.AddCert(c)
	}
	cfg.RootCAs = roots
	// Go checks the chain and the name itself unless told not to; the
	// check is made here instead, so that a pinned certificate passes
	// without a matching name, and anything else is checked as usual.
	cfg.InsecureSkipVerify = true
	cfg.VerifyConnection = func(cs tls.ConnectionState) error {
		if len(cs.PeerCertificates) == 0 {
			return errors.New("chain: the chain source presented no certificate")
		}
		leaf := cs.PeerCertificates[0]
		for _, c := range pinned {
			if leaf.Equal(c) {
				return nil
			}
		}
		opts := x509.VerifyOptions{Roots: roots, DNSName: cs.ServerName, Intermediates: x509.NewCertPool()}
		for _, c := range cs.PeerCertificates[1:] {
			opts.Intermediates.AddCert(c)
		}
		_, err := leaf.Verify(opts)
		return err
	}
	return cfg, nil
}

// parseCertificates reads every certificate of a PEM file.
func parseCertificates(pemBytes []byte) ([]*x509.Certificate, error) {
	var certs []*x509.Certificate
	for rest := pemBytes; ; {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("%w: the chain source's certificate file: %v", ErrInvalidArgument, err)
		}
		certs = append(certs, c)
	}
	if len(certs) == 0 {
		return nil, fmt.Errorf("%w: the chain source's certificate file holds no PEM certificate", ErrInvalidArgument)
	}
	return certs, nil
}

// DialContext dials through the proxy when there is one, directly
// otherwise. Through a SOCKS5 proxy the host name is resolved by the
// proxy, so an .onion address works and no DNS query leaves this
// machine.
func (r Reach) DialContext() (func(ctx context.Context, network, addr string) (net.Conn, error), error) {
	direct := &net.Dialer{}
	if r.Proxy == nil {
		return direct.DialContext, nil
	}
	d, err := proxy.FromURL(r.Proxy, direct)
	if err != nil {
		return nil, fmt.Errorf("%w: --chain-proxy: %v", ErrInvalidArgument, err)
	}
	cd, ok := d.(proxy.ContextDialer)
	if !ok {
		return nil, errors.New("chain: the SOCKS5 dialer cannot take a context")
	}
	return cd.DialContext, nil
}

// HTTPTransport is an HTTP transport that reaches a source as r says,
// keeping up to conns idle connections to it.
func (r Reach) HTTPTransport(conns int) (*http.Transport, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = conns
	dial, err := r.DialContext()
	if err != nil {
		return nil, err
	}
	tr.DialContext, tr.Proxy = dial, nil // the environment's HTTP proxy is not the operator's choice here
	if len(r.CertPEM) > 0 {
		if tr.TLSClientConfig, err = r.TLSConfig(""); err != nil {
			return nil, err
		}
	}
	return tr, nil
}
