package system_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/addrwatch/addrwatch/cluster/nodecert"
)

// Nodes prove themselves to each other with certificates of one cluster
// CA, on loopback too, so every cluster a test starts gets one: a node
// started without the --cluster-* flags would make a CA of its own, and
// one with peers refuses to.

// newCertDir is a directory for a test cluster's CA (t.TempDir itself is
// open to others, which nodecert refuses).
func newCertDir(t testing.TB) string { return filepath.Join(t.TempDir(), "certs") }

// nodeCertArgs gives node id a certificate of the CA in dir (made with
// the first certificate), as addrwatch cluster certs --out dir would, and
// returns the node's --cluster-* flags.
func nodeCertArgs(t testing.TB, dir, id string) []string {
	t.Helper()
	if _, err := os.Stat(filepath.Join(dir, nodecert.CertFile(id))); err != nil {
		if _, err := nodecert.Issue(dir, []nodecert.Node{{ID: id}}); err != nil {
			t.Fatalf("certificate for %s: %v", id, err)
		}
	}
	return []string{"--cluster-ca", filepath.Join(dir, nodecert.CAFile),
		"--cluster-cert", filepath.Join(dir, nodecert.CertFile(id)), "--cluster-key", filepath.Join(dir, nodecert.KeyFile(id))}
}

// choosesNodeTraffic reports whether args already say how the node talks
// to others: its own --cluster-* files, or --insecure-cluster.
func choosesNodeTraffic(args []string) bool {
	return slices.Contains(args, "--cluster-ca") || slices.Contains(args, "--insecure-cluster")
}
