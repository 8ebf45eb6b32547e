package main

import (
	"bytes"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/addrwatch/addrwatch/actors/registry"
	"github.com/addrwatch/addrwatch/cluster"
	"github.com/addrwatch/addrwatch/cluster/nodecert"
)

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// TestOwnNodeTLSIsMadeOnceAndPrivate: a node without peers makes its
// cluster CA and certificate at the first start, 0600 in a 0700 dir, and
// keeps them; a directory others may read is made private again.
func TestOwnNodeTLSIsMadeOnceAndPrivate(t *testing.T) {
	cfg := config{Data: t.TempDir(), NodeID: "node1"}
	if _, err := ownNodeTLS(cfg, quietLogger()); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(cfg.Data, ownCertsDir)
	read := func() map[string][]byte {
		files := map[string][]byte{}
		for _, name := range []string{nodecert.CAFile, nodecert.CAKeyFile, "node1.crt", "node1.key"} {
			path := filepath.Join(dir, name)
			if info, err := os.Stat(path); err != nil || info.Mode().Perm() != 0o600 {
				t.Fatalf("%s: %v, %v", path, info, err)
			}
			files[name], _ = os.ReadFile(path)
		}
		return files
	}
	if info, err := os.Stat(dir); err != nil || info.Mode().Perm() != 0o700 {
		t.Fatalf("%s: %v, %v", dir, info, err)
	}
	first := read()
	if _, err := ownNodeTLS(cfg, quietLogger()); err != nil {
		t.Fatal(err)
	}
	for name, data := range read() {
		if !bytes.Equal(data, first[name]) {
			t.Fatalf("the second start replaced %s", name)
		}
	}
	// Opened by hand, or copied in loosely: made private again, with a
	// warning.
	os.Chmod(dir, 0o755)
	os.Chmod(filepath.Join(dir, "node1.key"), 0o644)
	var logs bytes.Buffer
	if _, err := ownNodeTLS(cfg, slog.New(slog.NewTextHandler(&logs, nil))); err != nil {
		t.Fatal(err)
	}
	read()
	if info, _ := os.Stat(dir); info.Mode().Perm() != 0o700 || !strings.Contains(logs.String(), "level=WARN msg=\"the data dir's cluster certificates were open to other users") {
		t.Fatalf("an open certificate dir: %v\n%s", info.Mode(), logs.String())
	}
}

// TestOwnNodeTLSNeedsANodeAlone: a node with peers, by its flags or by its
// data dir's raft configuration (a cluster an older release ran on
// loopback without TLS), gets no CA of its own and is told what to do.
func TestOwnNodeTLSNeedsANodeAlone(t *testing.T) {
	olderCluster := t.TempDir()
	accounts := registry.New(quietLogger())
	defer accounts.Shutdown()
	node, err := cluster.Open(cluster.Config{NodeID: "n1", RaftAddr: "127.0.0.1:0", DataDir: olderCluster, Logger: quietLogger(), Insecure: true,
		Peers: []cluster.Peer{{ID: "n1", RaftAddr: "127.0.0.1:7101"}, {ID: "n2", RaftAddr: "127.0.0.1:7102"}}}, accounts)
	if err != nil {
		t.Fatal(err)
	}
	node.Close()

	for name, cfg := range map[string]config{
		"--peers":  {Data: t.TempDir(), NodeID: "n1", Peers: []cluster.Peer{{ID: "n1", RaftAddr: "127.0.0.1:7001"}, {ID: "n2", RaftAddr: "127.0.0.1:7002"}}},
		"--join":   {Data: t.TempDir(), NodeID: "n2", Join: true},
		"data dir": {Data: olderCluster, NodeID: "n1"},
	} {
		_, err := ownNodeTLS(cfg, quietLogger())
		if err == nil {
			t.Fatalf("%s: made a CA for a node with peers", name)
		}
		for _, want := range []string{"--cluster-ca", "--insecure-cluster", "addrwatch cluster certs"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: the refusal does not name %s: %v", name, want, err)
			}
		}
		if _, err := os.Stat(filepath.Join(cfg.Data, ownCertsDir)); err == nil {
			t.Errorf("%s: made a certificate dir", name)
		}
	}

	// A one-node data dir of an older release gets its CA.
	alone := t.TempDir()
	node, err = cluster.Open(cluster.Config{NodeID: "node1", RaftAddr: "127.0.0.1:0", DataDir: alone, Logger: quietLogger(), Insecure: true}, accounts)
	if err != nil {
		t.Fatal(err)
	}
	node.Close()
	if _, err := ownNodeTLS(config{Data: alone, NodeID: "node1"}, quietLogger()); err != nil {
		t.Fatalf("a one-node data dir: %v", err)
	}
}
