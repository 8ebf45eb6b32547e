package nodecert

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// newDir is a directory Issue may create (t.TempDir itself is 0755).
func newDir(t *testing.T) string { return filepath.Join(t.TempDir(), "certs") }

func readCert(t *testing.T, path string) *x509.Certificate {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(b)
	if block == nil {
		t.Fatalf("%s holds no PEM block", path)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return cert
}

// verifyNode checks id's certificate the way nodes do: it chains to the CA
// in dir, names ServerName, serves both ends of a connection, and matches
// its key.
func verifyNode(t *testing.T, dir, id string) *x509.Certificate {
	t.Helper()
	roots := x509.NewCertPool()
	roots.AddCert(readCert(t, filepath.Join(dir, CAFile)))
	pair, err := tls.LoadX509KeyPair(filepath.Join(dir, CertFile(id)), filepath.Join(dir, KeyFile(id)))
	if err != nil {
		t.Fatalf("%s: certificate and key: %v", id, err)
	}
	for _, usage := range []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth} {
		if _, err := pair.Leaf.Verify(x509.VerifyOptions{Roots: roots, DNSName: ServerName, KeyUsages: []x509.ExtKeyUsage{usage}}); err != nil {
			t.Fatalf("%s: %v", id, err)
		}
	}
	return pair.Leaf
}

func TestIssueMakesACAAndNodeCertificates(t *testing.T) {
	dir := newDir(t)
	issued, err := Issue(dir, []Node{{ID: "n1", Hosts: []string{"10.0.0.5", "node1.example"}}, {ID: "n2"}})
	if err != nil {
		t.Fatal(err)
	}
	if !issued.CACreated || len(issued.Files) != 6 {
		t.Fatalf("issued %+v", issued)
	}
	info, err := os.Stat(dir)
	if err != nil || info.Mode().Perm() != 0o700 {
		t.Fatalf("dir mode %v, %v; want 0700", info.Mode().Perm(), err)
	}
	for _, f := range issued.Files {
		info, err := os.Stat(f)
		if err != nil || info.Mode().Perm() != 0o600 {
			t.Fatalf("%s mode %v, %v; want 0600", f, info.Mode().Perm(), err)
		}
	}
	ca := readCert(t, filepath.Join(dir, CAFile))
	if !ca.IsCA || ca.MaxPathLen != 0 || !ca.MaxPathLenZero {
		t.Fatalf("CA: IsCA %v, MaxPathLen %d", ca.IsCA, ca.MaxPathLen)
	}
	n1 := verifyNode(t, dir, "n1")
	if n1.Subject.CommonName != "n1" || !slices.Equal(n1.DNSNames, []string{ServerName, "n1", "node1.example"}) ||
		len(n1.IPAddresses) != 1 || !n1.IPAddresses[0].Equal(net.ParseIP("10.0.0.5")) {
		t.Fatalf("n1 names: CN %q, DNS %v, IP %v", n1.Subject.CommonName, n1.DNSNames, n1.IPAddresses)
	}
	if n1.NotAfter.After(ca.NotAfter) {
		t.Fatalf("n1 outlives its CA: %s > %s", n1.NotAfter, ca.NotAfter)
	}
	verifyNode(t, dir, "n2")
}

// TestIssueReusesTheCA adds a node later: the CA in the directory signs
// its certificate and is left as it was.
func TestIssueReusesTheCA(t *testing.T) {
	dir := newDir(t)
	if _, err := Issue(dir, []Node{{ID: "n1"}}); err != nil {
		t.Fatal(err)
	}
	caBefore, _ := os.ReadFile(filepath.Join(dir, CAFile))
	keyBefore, _ := os.ReadFile(filepath.Join(dir, CAKeyFile))
	issued, err := Issue(dir, []Node{{ID: "n4"}})
	if err != nil {
		t.Fatal(err)
	}
	if issued.CACreated || len(issued.Files) != 2 {
		t.Fatalf("issued %+v", issued)
	}
	caAfter, _ := os.ReadFile(filepath.Join(dir, CAFile))
	keyAfter, _ := os.ReadFile(filepath.Join(dir, CAKeyFile))
	if !bytes.Equal(caBefore, caAfter) || !bytes.Equal(keyBefore, keyAfter) {
		t.Fatal("the CA changed")
	}
	verifyNode(t, dir, "n4")
}

func TestIssueNeverOverwrites(t *testing.T) {
	dir := newDir(t)
	if _, err := Issue(dir, []Node{{ID: "n1"}}); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(filepath.Join(dir, CertFile("n1")))
	_, err := Issue(dir, []Node{{ID: "n5"}, {ID: "n1"}})
	if err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Fatalf("reissuing n1: %v", err)
	}
	if after, _ := os.ReadFile(filepath.Join(dir, CertFile("n1"))); !bytes.Equal(before, after) {
		t.Fatal("n1's certificate was replaced")
	}
	if _, err := os.Stat(filepath.Join(dir, CertFile("n5"))); err == nil {
		t.Fatal("a refused run wrote n5's certificate")
	}
}

func TestIssueRefuses(t *testing.T) {
	open := filepath.Join(t.TempDir(), "open")
	if err := os.Mkdir(open, 0o755); err != nil {
		t.Fatal(err)
	}
	os.Chmod(open, 0o755)
	halfCA := newDir(t)
	if _, err := Issue(halfCA, []Node{{ID: "n1"}}); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(halfCA, CAKeyFile))
	cases := map[string]struct {
		dir   string
		nodes []Node
	}{
		"a directory open to others": {open, []Node{{ID: "n1"}}},
		"half a CA":                  {halfCA, []Node{{ID: "n2"}}},
		"no nodes":                   {newDir(t), nil},
		"empty id":                   {newDir(t), []Node{{ID: ""}}},
		"id with a slash":            {newDir(t), []Node{{ID: "a/b"}}},
		"id of dots":                 {newDir(t), []Node{{ID: ".."}}},
		"id named like the CA":       {newDir(t), []Node{{ID: "ca"}}},
		"id twice":                   {newDir(t), []Node{{ID: "n1"}, {ID: "n1"}}},
		"a bad host":                 {newDir(t), []Node{{ID: "n1", Hosts: []string{"not a host"}}}},
	}
	for name, c := range cases {
		if _, err := Issue(c.dir, c.nodes); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if entries, _ := os.ReadDir(open); len(entries) != 0 {
		t.Fatalf("wrote into a directory open to others: %v", entries)
	}
}
