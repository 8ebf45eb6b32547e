package cluster

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/addrwatch/addrwatch/cluster/nodecert"
)

// NodeTLS is this node's side of mutual TLS between nodes: it accepts a
// node connection only from a peer whose certificate chains to the cluster
// CA and names nodecert.ServerName, and dials other nodes presenting its
// own certificate and checking theirs the same way. TLS 1.3 only.
type NodeTLS struct {
	server *tls.Config
	client *tls.Config
	// Expires is when this node's certificate stops being valid; after it,
	// no other node accepts this one.
	Expires time.Time
}

// LoadNodeTLS reads the cluster CA's certificate and this node's
// certificate and key (PEM files, as addrwatch cluster certs writes them).
// It checks this node's certificate the way its peers will, so a wrong file
// fails at start rather than at the first connection.
func LoadNodeTLS(caFile, certFile, keyFile string) (*NodeTLS, error) {
	caPEM, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("cluster CA: %w", err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(caPEM) {
		return nil, fmt.Errorf("cluster CA %s holds no PEM certificate", caFile)
	}
	pair, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("node certificate: %w", err)
	}
	for _, usage := range []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth} {
		opts := x509.VerifyOptions{Roots: roots, DNSName: nodecert.ServerName, KeyUsages: []x509.ExtKeyUsage{usage}}
		if _, err := pair.Leaf.Verify(opts); err != nil {
			return nil, fmt.Errorf("node certificate %s is not valid for a node of the cluster CA %s: %w", certFile, caFile, err)
		}
	}
	certs := []tls.Certificate{pair}
	return &NodeTLS{
		server: &tls.Config{
			MinVersion:       tls.VersionTLS13,
			Certificates:     certs,
			ClientAuth:       tls.RequireAndVerifyClientCert,
			ClientCAs:        roots,
			VerifyConnection: peerIsNode,
		},
		client: &tls.Config{
			MinVersion:   tls.VersionTLS13,
			Certificates: certs,
			RootCAs:      roots,
			ServerName:   nodecert.ServerName,
		},
		Expires: pair.Leaf.NotAfter,
	}, nil
}

// peerIsNode holds a dialling peer's certificate, already verified against
// the cluster CA, to the rule the dialler's side applies through
// ServerName: it must name nodecert.ServerName.
func peerIsNode(cs tls.ConnectionState) error {
	if len(cs.PeerCertificates) == 0 {
		return errors.New("cluster: a node connection without a certificate")
	}
	return cs.PeerCertificates[0].VerifyHostname(nodecert.ServerName)
}
