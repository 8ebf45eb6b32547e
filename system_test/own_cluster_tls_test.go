package system_test

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/addrwatch/addrwatch/cluster/nodecert"
)

// TestDefaultNodeServesNoPlainNodeStream plays a local user against a
// server started with the defaults (no --cluster-* flags, loopback): it
// opens the raft port, names the admin stream and asks for a backup
// without a token. The node must close the connection without serving
// anything; before nodes authenticated each other on loopback it answered
// 200 with every account's password and secret hashes.
func TestDefaultNodeServesNoPlainNodeStream(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	if got := plainAdminBackup(t, s.raftAddr); len(got) > 0 {
		t.Fatalf("a plain connection to the raft port got an answer to GET /admin/v1/backup without a token (%d bytes):\n%.200q", len(got), got)
	}

	// The node's own CA and certificate are private, and a restart keeps
	// them.
	dir := filepath.Join(s.Dir, "cluster-tls")
	before := privateFiles(t, dir)
	for _, name := range []string{nodecert.CAFile, nodecert.CAKeyFile, "node1.crt", "node1.key"} {
		if _, made := before[name]; !made {
			t.Fatalf("%s holds no %s: %v", dir, name, before)
		}
	}
	s.stop()
	s.start()
	if after := privateFiles(t, dir); !equalFiles(before, after) {
		t.Fatal("a restart made new cluster certificates instead of keeping the data dir's")
	}

	// A node with a certificate of another CA is refused; one that
	// addrwatch cluster certs made from the data dir's CA is served.
	caPEM, err := os.ReadFile(filepath.Join(dir, nodecert.CAFile))
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(caPEM)
	stranger := filepath.Join(t.TempDir(), "other-ca")
	if _, err := nodecert.Issue(stranger, []nodecert.Node{{ID: "n2"}}); err != nil {
		t.Fatal(err)
	}
	if ack, err := tlsStreamByte(s.raftAddr, stranger, "n2", roots); err == nil {
		t.Fatalf("a certificate of another CA was accepted (answered %q)", ack)
	}
	if _, err := nodecert.Issue(dir, []nodecert.Node{{ID: "n2"}}); err != nil {
		t.Fatal(err)
	}
	if ack, err := tlsStreamByte(s.raftAddr, dir, "n2", roots); err != nil || ack != "A" {
		t.Fatalf("a certificate of the data dir's CA: answered %q, %v; want the stream byte back", ack, err)
	}
}

// TestInsecureClusterHoldsNodeStreamsToTheToken: with --insecure-cluster
// any local process can open the raft port and speak a node stream, so a
// request on the admin stream needs the node's admin token like one on
// the admin listener (before, a backup without one answered 200), and
// the restore stream of a sharded cluster is not served at all.
func TestInsecureClusterHoldsNodeStreamsToTheToken(t *testing.T) {
	t.Parallel()
	s := startServer(t, "--insecure-cluster")
	got := plainAdminBackup(t, s.raftAddr)
	if !bytes.HasPrefix(got, []byte("AHTTP/1.1 401 ")) {
		t.Fatalf("the admin stream without a token answered:\n%.200q", got)
	}
	if got := plainAdminBackup(t, s.raftAddr, "Authorization: Bearer "+s.AdminToken); !bytes.HasPrefix(got, []byte("AHTTP/1.1 200 ")) {
		t.Fatalf("the admin stream with the token answered:\n%.200q", got)
	}
	c, err := net.DialTimeout("tcp", s.raftAddr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(15 * time.Second))
	c.Write([]byte("S"))
	if ack, _ := io.ReadAll(c); len(ack) > 0 {
		t.Fatalf("the restore stream over plain TCP was taken (answered %q)", ack)
	}
}

// plainAdminBackup writes the admin stream's byte and a backup request
// with the given headers (none: no token) over plain TCP, and returns
// whatever comes back.
func plainAdminBackup(t *testing.T, raftAddr string, headers ...string) []byte {
	t.Helper()
	c, err := net.DialTimeout("tcp", raftAddr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(15 * time.Second))
	var extra string
	for _, h := range headers {
		extra += h + "\r\n"
	}
	c.Write([]byte("A" + "GET /admin/v1/backup HTTP/1.1\r\nHost: node\r\nConnection: close\r\n" + extra + "\r\n"))
	got, _ := io.ReadAll(c) // a refusal is a close or a reset
	return got
}

// tlsStreamByte dials raftAddr over TLS as node id with its certificate in
// dir, asks for the admin stream and returns the node's answer.
func tlsStreamByte(raftAddr, dir, id string, roots *x509.CertPool) (string, error) {
	pair, err := tls.LoadX509KeyPair(filepath.Join(dir, nodecert.CertFile(id)), filepath.Join(dir, nodecert.KeyFile(id)))
	if err != nil {
		return "", err
	}
	d := &net.Dialer{Timeout: 5 * time.Second}
	c, err := tls.DialWithDialer(d, "tcp", raftAddr, &tls.Config{MinVersion: tls.VersionTLS13, Certificates: []tls.Certificate{pair},
		RootCAs: roots, ServerName: nodecert.ServerName})
	if err != nil {
		return "", err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write([]byte("A")); err != nil {
		return "", err
	}
	ack := make([]byte, 1)
	_, err = io.ReadFull(c, ack)
	return string(ack), err
}

// privateFiles checks that dir is 0700 and every file in it 0600, and
// returns their contents by name.
func privateFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	info, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if perm := info.Mode().Perm(); perm != 0o700 {
		t.Errorf("%s is %#o, want 0700", dir, perm)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for _, e := range entries {
		path := filepath.Join(dir, e.Name())
		info, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if perm := info.Mode().Perm(); perm != 0o600 {
			t.Errorf("%s is %#o, want 0600", path, perm)
		}
		if files[e.Name()], err = os.ReadFile(path); err != nil {
			t.Fatal(err)
		}
	}
	return files
}

func equalFiles(a, b map[string][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for name, data := range a {
		if !bytes.Equal(data, b[name]) {
			return false
		}
	}
	return true
}

// TestNodeWithPeersNeedsClusterCerts: a node with peers and no --cluster-*
// flags would make a CA no peer knows, so it does not start, and says how
// to give its nodes certificates of one CA.
func TestNodeWithPeersNeedsClusterCerts(t *testing.T) {
	t.Parallel()
	for name, args := range map[string][]string{
		"--peers": {"--node-id", "n1", "--peers", "n1=127.0.0.1:7001,n2=127.0.0.1:7002"},
		"--join":  {"--node-id", "n2", "--join"},
	} {
		dir := t.TempDir()
		out, err := exec.Command(serverBinary, append([]string{"--data", dir, "--raft", freeAddr(t), "--http", freeAddr(t), "--admin", freeAddr(t)}, args...)...).CombinedOutput()
		if err == nil {
			t.Fatalf("%s: started without cluster certificates:\n%s", name, out)
		}
		for _, want := range []string{"--cluster-ca", "--cluster-cert", "--cluster-key", "--insecure-cluster", "addrwatch cluster certs"} {
			if !strings.Contains(string(out), want) {
				t.Errorf("%s: the refusal does not name %s:\n%s", name, want, out)
			}
		}
		if _, err := os.Stat(filepath.Join(dir, "cluster-tls")); err == nil {
			t.Errorf("%s: made a cluster CA it cannot use", name)
		}
	}
}
