//go:build unix

package system_test

import (
	"bufio"
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// selfSignedCert writes a self-signed certificate for 127.0.0.1 and its
// key into dir and returns their paths and the certificate.
func selfSignedCert(t *testing.T, dir, name string) (certPath, keyPath string, cert *x509.Certificate) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	template := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: "addrwatch test " + name},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, template, template, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	if cert, err = x509.ParseCertificate(der); err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certPath, keyPath = filepath.Join(dir, name+"-cert.pem"), filepath.Join(dir, name+"-key.pem")
	if err := os.WriteFile(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certPath, keyPath, cert
}

// httpsClient trusts cert alone.
func httpsClient(cert *x509.Certificate) *http.Client {
	roots := x509.NewCertPool()
	roots.AddCert(cert)
	return &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}}
}

// doTLS is do for an HTTPS URL through client; it also reports the TLS
// version the answer came over.
func doTLS(t *testing.T, client *http.Client, method, url, bearer string, body any) (response, uint16) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		enc, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(enc)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+bearer)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.TLS == nil {
		t.Fatalf("%s %s: answered without TLS", method, url)
	}
	checkContract(t, method, url, resp.StatusCode, resp.Header, b)
	return response{Status: resp.StatusCode, Header: resp.Header, Body: b}, resp.TLS.Version
}

// TestPublicListenerServesHTTPS starts a node with --tls-cert and
// --tls-key: the owner API and the agent API answer over HTTPS (TLS 1.2
// with an AEAD suite or later, never older or CBC), and plain HTTP to that
// port gets no API answer.
func TestPublicListenerServesHTTPS(t *testing.T) {
	t.Parallel()
	certPath, keyPath, cert := selfSignedCert(t, t.TempDir(), "public")
	s := startServer(t, "--tls-cert", certPath, "--tls-key", keyPath)
	base := "https://" + s.httpAddr
	client := httpsClient(cert)

	a := s.createAccount(t, "base") // the admin listener stays plain HTTP
	created, _ := doTLS(t, client, "POST", base+"/owner/v1/keys", a.OwnerSecret, map[string]any{"capability": "read", "name": "over TLS"})
	expect(t, created, http.StatusCreated, "")
	key := created.JSON(t)["key"].(string)
	me, version := doTLS(t, client, "GET", base+"/v1/me", key, nil)
	expect(t, me, http.StatusOK, "")
	if got := me.JSON(t)["account_id"]; got != a.ID {
		t.Fatalf("GET /v1/me over HTTPS: account_id %v, want %s", got, a.ID)
	}
	if version < tls.VersionTLS12 {
		t.Fatalf("served over TLS version %#x, below 1.2", version)
	}

	// A client that offers only TLS 1.1 is refused in the handshake.
	old, err := tls.Dial("tcp", s.httpAddr, &tls.Config{RootCAs: client.Transport.(*http.Transport).TLSClientConfig.RootCAs, MinVersion: tls.VersionTLS10, MaxVersion: tls.VersionTLS11})
	if err == nil {
		old.Close()
		t.Fatal("a TLS 1.1 handshake succeeded")
	}

	// Nor is a TLS 1.2 client that offers only a CBC suite (the
	// certificate is ECDSA, so this is the ECDSA form of
	// ECDHE-RSA-AES128-SHA).
	cbc, err := tls.Dial("tcp", s.httpAddr, &tls.Config{RootCAs: client.Transport.(*http.Transport).TLSClientConfig.RootCAs, MaxVersion: tls.VersionTLS12, CipherSuites: []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA}})
	if err == nil {
		cbc.Close()
		t.Fatal("a TLS 1.2 handshake with only ECDHE-ECDSA-AES128-SHA succeeded")
	}

	// Plain HTTP to the HTTPS port: whatever comes back (a TLS alert, a
	// closed connection) is not an HTTP answer from the API.
	conn, err := net.DialTimeout("tcp", s.httpAddr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(conn, "GET /v1/me HTTP/1.1\r\nHost: "+s.httpAddr+"\r\nAuthorization: Bearer "+key+"\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	if resp, err := http.ReadResponse(bufio.NewReader(conn), nil); err == nil {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Fatalf("plain HTTP to the HTTPS port got an HTTP answer: %d %s", resp.StatusCode, body)
	}
}

// TestPublicTLSFilesAreCheckedAtStart: one of --tls-cert and --tls-key
// alone, a file that cannot be read and a key that is not the
// certificate's each stop the server at start, with a message naming the
// flag or file.
func TestPublicTLSFilesAreCheckedAtStart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	certPath, keyPath, _ := selfSignedCert(t, dir, "one")
	_, otherKeyPath, _ := selfSignedCert(t, dir, "other")
	missing := filepath.Join(dir, "missing.pem")
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"cert alone", []string{"--tls-cert", certPath}, "--tls-cert and --tls-key go together"},
		{"key alone", []string{"--tls-key", keyPath}, "--tls-cert and --tls-key go together"},
		{"unreadable cert", []string{"--tls-cert", missing, "--tls-key", keyPath}, missing},
		{"unreadable key", []string{"--tls-cert", certPath, "--tls-key", missing}, missing},
		{"mismatched key", []string{"--tls-cert", certPath, "--tls-key", otherKeyPath}, otherKeyPath},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := &server{t: t, Dir: t.TempDir(), AdminToken: "test-admin-token"}
			s.httpAddr, s.adminAddr, s.raftAddr = freeAddr(t), freeAddr(t), freeAddr(t)
			s.URL, s.AdminURL = "http://"+s.httpAddr, "http://"+s.adminAddr
			code, out := s.startRefused(c.args...)
			if code == 0 || !strings.Contains(out, c.want) {
				t.Fatalf("exit %d, want non-zero with %q in the output:\n%s", code, c.want, out)
			}
		})
	}
}
