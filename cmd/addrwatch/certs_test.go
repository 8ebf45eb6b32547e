package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestClusterCerts(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "certs")
	got := runCLI(t, nil, "cluster", "certs", "--out", dir, "--nodes", "n1,n2,n3", "--hosts", "n1=10.0.0.5,n1=node1.example,n3=10.0.0.7")
	if got.code != exitOK || got.stderr != "" {
		t.Fatalf("exit %d, stderr %q", got.code, got.stderr)
	}
	for _, want := range []string{"made a new cluster CA", "--cluster-cert " + filepath.Join(dir, "n3.crt")} {
		if !strings.Contains(got.stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, got.stdout)
		}
	}
	for _, f := range []string{"ca.crt", "ca.key", "n1.crt", "n1.key", "n2.crt", "n2.key", "n3.crt", "n3.key"} {
		if info, err := os.Stat(filepath.Join(dir, f)); err != nil || info.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v", f, err)
		}
	}

	// Again for the same node: refused, nothing replaced.
	again := runCLI(t, nil, "cluster", "certs", "--out", dir, "--nodes", "n2")
	if again.code != exitFailure || !strings.Contains(again.stderr, "already exists") {
		t.Fatalf("reissue n2: exit %d, stderr %q", again.code, again.stderr)
	}
	// A fourth node later, signed by the same CA.
	fourth := runCLI(t, nil, "cluster", "certs", "--out", dir, "--nodes", "n4", "--json")
	var report struct {
		CACreated bool     `json:"ca_created"`
		Files     []string `json:"files"`
	}
	if fourth.code != exitOK || json.Unmarshal([]byte(fourth.stdout), &report) != nil || report.CACreated || len(report.Files) != 2 {
		t.Fatalf("n4: exit %d, stdout %q, stderr %q", fourth.code, fourth.stdout, fourth.stderr)
	}
}

func TestClusterCertsUsageErrors(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "certs")
	for _, args := range [][]string{
		{"cluster", "certs", "--nodes", "n1"},
		{"cluster", "certs", "--out", dir},
		{"cluster", "certs", "--out", dir, "--nodes", "n1", "--hosts", "n2=10.0.0.6"},
		{"cluster", "certs", "--out", dir, "--nodes", "n1", "--hosts", "10.0.0.6"},
	} {
		got := runCLI(t, nil, args...)
		if got.code != exitUsage {
			t.Errorf("%q: exit %d, stderr %q", args, got.code, got.stderr)
		}
	}
	if _, err := os.Stat(dir); err == nil {
		t.Fatal("a usage error created the directory")
	}
}
