// Package nodecert makes the certificates nodes prove themselves to each
// other with: a cluster CA and, per node, a certificate and key usable both
// to accept and to dial node connections. It needs nothing but the
// standard library, so the operator CLI can make certificates offline
// (addrwatch cluster certs) without the server's packages.
package nodecert

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// ServerName is the DNS name every node certificate carries. raft dials a
// node by its raft address, which a certificate need not name (an address
// may change, and a test proxy may stand in for it), so a dialling node
// checks the other side's certificate against this name instead: a node is
// whoever holds a certificate from the cluster CA with this name.
const ServerName = "node.addrwatch.internal"

// File names inside the certificate directory.
const (
	CAFile    = "ca.crt"
	CAKeyFile = "ca.key"
)

// CertFile and KeyFile name a node's certificate and key.
func CertFile(id string) string { return id + ".crt" }
func KeyFile(id string) string  { return id + ".key" }

// Validity: the CA outlives the node certificates it signs, so nodes can be
// given new certificates from the same CA.
const (
	caValidity   = 10 * 365 * 24 * time.Hour
	nodeValidity = 5 * 365 * 24 * time.Hour
	// clockSkewMax backdates every certificate, so a node whose clock runs
	// behind the machine that made the certificates still accepts them.
	clockSkewMax = time.Hour
)

// Node is a node to make a certificate for: its raft node id and any host
// names or IP addresses to name in the certificate besides it.
type Node struct {
	ID    string
	Hosts []string
}

// Issued says what Issue wrote.
type Issued struct {
	CACreated bool     // false: the CA already in the directory signed
	Files     []string // every file written, in order
}

// nodeIDPattern keeps ids usable as file names and certificate names.
var nodeIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$`)

// Issue writes a certificate and key for each node into dir, signed by the
// CA in dir, which it creates (ca.crt, ca.key) when dir holds none. It
// never overwrites a file: a node that already has a certificate there is
// an error, and nothing is written. dir is created 0700 and must not be
// readable by others; every file is 0600.
func Issue(dir string, nodes []Node) (Issued, error) {
	if err := checkNodes(nodes); err != nil {
		return Issued{}, err
	}
	if err := prepareDir(dir); err != nil {
		return Issued{}, err
	}
	for _, n := range nodes {
		for _, name := range []string{CertFile(n.ID), KeyFile(n.ID)} {
			if exists(filepath.Join(dir, name)) {
				return Issued{}, fmt.Errorf("%s already exists; refusing to overwrite it (move it away to issue %s a new certificate)", filepath.Join(dir, name), n.ID)
			}
		}
	}
	ca, created, err := loadOrCreateCA(dir)
	if err != nil {
		return Issued{}, err
	}
	var out []pemFile
	if created {
		out = append(out, ca.files()...)
	}
	for _, n := range nodes {
		files, err := ca.issue(n)
		if err != nil {
			return Issued{}, err
		}
		out = append(out, files...)
	}
	written, err := writeAll(dir, out)
	return Issued{CACreated: created, Files: written}, err
}

func checkNodes(nodes []Node) error {
	if len(nodes) == 0 {
		return errors.New("no nodes to make certificates for")
	}
	seen := map[string]bool{}
	for _, n := range nodes {
		if !nodeIDPattern.MatchString(n.ID) || n.ID == "ca" {
			return fmt.Errorf("node id %q must be 1-63 letters, digits, '.', '_' or '-', start with a letter or digit, and not be \"ca\"", n.ID)
		}
		if seen[n.ID] {
			return fmt.Errorf("node id %q is given twice", n.ID)
		}
		seen[n.ID] = true
		for _, h := range n.Hosts {
			if net.ParseIP(h) == nil && !isDNSName(h) {
				return fmt.Errorf("host %q of node %s is neither an IP address nor a DNS name", h, n.ID)
			}
		}
	}
	return nil
}

// isDNSName accepts host names made of letters, digits and hyphens.
func isDNSName(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	for _, label := range strings.Split(s, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, r := range label {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-') {
				return false
			}
		}
	}
	return true
}

// prepareDir creates dir 0700, or checks that an existing one is not open
// to others: the CA key and the node keys live there.
func prepareDir(dir string) error {
	info, err := os.Stat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return err
		}
		return os.Chmod(dir, 0o700) // whatever the umask
	}
	if err != nil {
		return err
	}
	if !info.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	if perm := info.Mode().Perm(); perm&0o077 != 0 {
		return fmt.Errorf("%s is open to other users (mode %#o); it will hold private keys: chmod 700 it or choose a new directory", dir, perm)
	}
	return nil
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// authority is the CA that signs node certificates.
type authority struct {
	cert    *x509.Certificate
	certPEM []byte
	key     crypto.Signer
	keyPEM  []byte
}

func loadOrCreateCA(dir string) (*authority, bool, error) {
	certPath, keyPath := filepath.Join(dir, CAFile), filepath.Join(dir, CAKeyFile)
	haveCert, haveKey := exists(certPath), exists(keyPath)
	switch {
	case haveCert && haveKey:
		ca, err := loadCA(certPath, keyPath)
		return ca, false, err
	case haveCert || haveKey:
		return nil, false, fmt.Errorf("%s holds only one of %s and %s; a CA needs both (or neither, to make a new one)", dir, CAFile, CAKeyFile)
	}
	ca, err := newCA()
	return ca, true, err
}

func newCA() (*authority, error) {
	key, keyPEM, err := newKey()
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "addrwatch cluster CA"},
		NotBefore:             now.Add(-clockSkewMax),
		NotAfter:              now.Add(caValidity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true, // it signs node certificates only
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &authority{cert: cert, certPEM: pemBlock("CERTIFICATE", der), key: key, keyPEM: keyPEM}, nil
}

func loadCA(certPath, keyPath string) (*authority, error) {
	certPEM, err := os.ReadFile(certPath)
	if err != nil {
		return nil, err
	}
	block, _ := pem.Decode(certPEM)
	if block == nil || block.Type != "CERTIFICATE" {
		return nil, fmt.Errorf("%s holds no PEM certificate", certPath)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", certPath, err)
	}
	if !cert.IsCA {
		return nil, fmt.Errorf("%s is not a CA certificate", certPath)
	}
	keyPEM, err := os.ReadFile(keyPath)
	if err != nil {
		return nil, err
	}
	block, _ = pem.Decode(keyPEM)
	if block == nil {
		return nil, fmt.Errorf("%s holds no PEM key", keyPath)
	}
	parsed, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", keyPath, err)
	}
	key, isSigner := parsed.(crypto.Signer)
	if !isSigner || !publicKeysEqual(key.Public(), cert.PublicKey) {
		return nil, fmt.Errorf("%s is not the key of %s", keyPath, certPath)
	}
	if time.Now().After(cert.NotAfter) {
		return nil, fmt.Errorf("the CA in %s expired on %s; make a new CA in a new directory and give every node a new certificate", certPath, cert.NotAfter.Format(time.DateOnly))
	}
	return &authority{cert: cert, certPEM: certPEM, key: key}, nil
}

func publicKeysEqual(a, b crypto.PublicKey) bool {
	eq, isComparable := a.(interface{ Equal(crypto.PublicKey) bool })
	return isComparable && eq.Equal(b)
}

// files are the CA's own files, written when Issue creates it.
func (ca *authority) files() []pemFile {
	return []pemFile{{CAFile, ca.certPEM}, {CAKeyFile, ca.keyPEM}}
}

// issue makes a node's certificate and key. The certificate serves both
// ends of a node connection (server and client authentication) and names
// ServerName, the node id when it is a DNS name, and the node's hosts.
func (ca *authority) issue(n Node) ([]pemFile, error) {
	key, keyPEM, err := newKey()
	if err != nil {
		return nil, err
	}
	now := time.Now()
	notAfter := now.Add(nodeValidity)
	if ca.cert.NotAfter.Before(notAfter) {
		notAfter = ca.cert.NotAfter // a certificate cannot outlive its CA
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: n.ID},
		NotBefore:    now.Add(-clockSkewMax),
		NotAfter:     notAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		DNSNames:     []string{ServerName},
	}
	if isDNSName(n.ID) {
		tmpl.DNSNames = append(tmpl.DNSNames, n.ID)
	}
	for _, h := range n.Hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, key.Public(), ca.key)
	if err != nil {
		return nil, fmt.Errorf("sign the certificate of %s: %w", n.ID, err)
	}
	return []pemFile{{CertFile(n.ID), pemBlock("CERTIFICATE", der)}, {KeyFile(n.ID), keyPEM}}, nil
}

func newKey() (crypto.Signer, []byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	return key, pemBlock("PRIVATE KEY", der), nil
}

// serial is a random 128-bit serial number, as CAs are asked to use.
func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		panic("nodecert: no randomness: " + err.Error())
	}
	return n
}

func pemBlock(kind string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der})
}

type pemFile struct {
	name string
	data []byte
}

// writeAll creates every file 0600, refusing to replace one that appeared
// meanwhile; on a failure it removes what it wrote, so a rerun starts
// clean.
func writeAll(dir string, files []pemFile) ([]string, error) {
	var written []string
	for _, f := range files {
		path := filepath.Join(dir, f.name)
		if err := writeNew(path, f.data); err != nil {
			for _, w := range written {
				os.Remove(w)
			}
			return nil, err
		}
		written = append(written, path)
	}
	return written, nil
}

func writeNew(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if err := f.Chmod(0o600); err != nil { // whatever the umask
		f.Close()
		os.Remove(path)
		return err
	}
	_, err = f.Write(data)
	if serr := f.Sync(); err == nil {
		err = serr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
	}
	return err
}
