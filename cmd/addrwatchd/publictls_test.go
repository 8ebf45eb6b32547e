package main

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"log/slog"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// writeCert writes a self-signed certificate for 127.0.0.1 with key, and
// the key, into dir as the --tls-* files.
func writeCert(t *testing.T, dir string, key crypto.Signer) (*publicTLSFiles, *x509.CertPool) {
	t.Helper()
	template := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "addrwatch test"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, template, template, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	files := &publicTLSFiles{Cert: filepath.Join(dir, "cert.pem"), Key: filepath.Join(dir, "key.pem")}
	if err := os.WriteFile(files.Cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(files.Key, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	roots := x509.NewCertPool()
	roots.AddCert(cert)
	return files, roots
}

// handshake runs one TLS handshake between the server's configuration and
// a client's, in memory.
func handshake(server, client *tls.Config) (tls.ConnectionState, error) {
	serverEnd, clientEnd := net.Pipe()
	go func() {
		defer serverEnd.Close()
		tls.Server(serverEnd, server).Handshake()
	}()
	defer clientEnd.Close()
	conn := tls.Client(clientEnd, client)
	err := conn.Handshake()
	return conn.ConnectionState(), err
}

// Finding (issue 28, item 5): the public listener accepted TLS 1.2 with
// CBC suites (ECDHE-RSA-AES128-SHA). Now TLS 1.2 is offered only with
// ECDHE and an AEAD (AES-GCM or ChaCha20-Poly1305), for an RSA and an
// ECDSA certificate alike; TLS 1.3 (all AEAD) is served as before.
func TestPublicTLSOffersOnlyAEADSuitesInTLS12(t *testing.T) {
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	every := append(tls.CipherSuites(), tls.InsecureCipherSuites()...)
	for kind, key := range map[string]crypto.Signer{"RSA": rsaKey, "ECDSA": ecKey} {
		files, roots := writeCert(t, t.TempDir(), key)
		config, err := loadPublicTLS(files, logger)
		if err != nil {
			t.Fatal(err)
		}
		served := 0
		for _, suite := range every {
			if !slices.Contains(suite.SupportedVersions, tls.VersionTLS12) {
				continue
			}
			client := &tls.Config{RootCAs: roots, ServerName: "127.0.0.1", MaxVersion: tls.VersionTLS12, CipherSuites: []uint16{suite.ID}}
			_, err := handshake(config, client)
			aead := strings.Contains(suite.Name, "_GCM_") || strings.Contains(suite.Name, "_CHACHA20_POLY1305")
			want := strings.HasPrefix(suite.Name, "TLS_ECDHE_"+kind+"_WITH_") && aead
			switch {
			case err == nil && !want:
				t.Errorf("%s certificate: a TLS 1.2 client offering only %s was served", kind, suite.Name)
			case err != nil && want:
				t.Errorf("%s certificate: a TLS 1.2 client offering only %s was refused: %v", kind, suite.Name, err)
			case err == nil:
				served++
			}
		}
		if served != 3 {
			t.Errorf("%s certificate: %d TLS 1.2 suites served, want its 3 ECDHE AEAD suites", kind, served)
		}
		state, err := handshake(config, &tls.Config{RootCAs: roots, ServerName: "127.0.0.1"})
		if err != nil || state.Version != tls.VersionTLS13 {
			t.Errorf("%s certificate: a default client got version %#x, %v; want TLS 1.3", kind, state.Version, err)
		}
	}
}
