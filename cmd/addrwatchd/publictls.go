package main

import (
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"os"
	"time"

	"github.com/addrwatch/addrwatch/httpd/edge"
)

// publicTLSFiles are --tls-cert and --tls-key: the public listener's own
// certificate, unrelated to the cluster CA of node-to-node traffic.
type publicTLSFiles struct{ Cert, Key string }

// checkPublicTLS accepts both files or neither: one alone is a mistake
// that would otherwise serve plain HTTP where HTTPS was meant.
func checkPublicTLS(files publicTLSFiles) (*publicTLSFiles, error) {
	switch {
	case files.Cert == "" && files.Key == "":
		return nil, nil
	case files.Cert == "" || files.Key == "":
		return nil, fmt.Errorf("--tls-cert and --tls-key go together: give both to serve the public listener over HTTPS, or neither to serve plain HTTP")
	}
	return &files, nil
}

// loadPublicTLS reads the --tls-* files, when given, into the public
// listener's TLS configuration. A file that cannot be read, or a key that
// is not the certificate's, stops the server at start with the file named.
func loadPublicTLS(files *publicTLSFiles, logger *slog.Logger) (*tls.Config, error) {
	if files == nil {
		return nil, nil
	}
	certPEM, err := os.ReadFile(files.Cert)
	if err != nil {
		return nil, fmt.Errorf("--tls-cert: %w", err)
	}
	keyPEM, err := os.ReadFile(files.Key)
	if err != nil {
		return nil, fmt.Errorf("--tls-key: %w", err)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("--tls-cert %s and --tls-key %s are not a certificate and its private key: %w", files.Cert, files.Key, err)
	}
	if info, err := os.Stat(files.Key); err == nil && info.Mode().Perm()&0o077 != 0 {
		logger.Warn("--tls-key is readable by other users; whoever reads it can impersonate this server: chmod 600 it",
			"tls_key", files.Key, "mode", fmt.Sprintf("%#o", info.Mode().Perm()))
	}
	if leaf := cert.Leaf; leaf != nil && time.Until(leaf.NotAfter) < certExpiryWarning {
		logger.Warn("the public listener's certificate expires soon; replace --tls-cert and restart",
			"tls_cert", files.Cert, "cert_expires", leaf.NotAfter.UTC().Format(time.RFC3339))
	}
	return &tls.Config{
		Certificates: []tls.Certificate{cert},
		MinVersion:   tls.VersionTLS12,
		CipherSuites: publicCipherSuites,
		// fasthttp speaks HTTP/1.x only.
		NextProtos: []string{"http/1.1"},
	}, nil
}

// publicCipherSuites are the TLS 1.2 suites the public listener offers:
// ECDHE key exchange (forward secrecy) with an AEAD cipher only. Go's
// defaults also take the CBC suites with SHA-1 MACs, whose padding has
// had a long line of timing attacks. Every current browser and HTTP
// library has these (or speaks TLS 1.3, whose suites Go does not let us
// choose and which are all AEAD).
var publicCipherSuites = []uint16{
	tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
	tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
	tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
	tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
	tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
	tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
}

// listen listens on addr, speaking TLS when tlsConfig is set. The TLS
// layer goes under the edge's listener (edge.Server.Serve wraps it), so the
// edge's line-ending check sees the decrypted bytes, and over the lazy
// deadlines (edge.LazyDeadlines), which must carry on below it.
func listen(addr string, tlsConfig *tls.Config) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen %s: %w", addr, err)
	}
	ln = edge.LazyDeadlines(ln)
	if tlsConfig != nil {
		ln = tls.NewListener(ln, tlsConfig)
	}
	return ln, nil
}
