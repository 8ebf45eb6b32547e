package main

import (
	"bytes"
	"context"
	"path/filepath"
	"regexp"
	"testing"
)

// bench fsync times the appends it was asked for on --data's disk, says
// what two in series cost, and leaves no file behind.
func TestFsyncTimesAppendsUnderData(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"--data", dir, "--requests", "50", "fsync"}, noEnv, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	if !regexp.MustCompile(`fsync on .*: 50 appends of 4096 bytes`).MatchString(out.String()) ||
		!regexp.MustCompile(`two in series .*: p50 \S+`).MatchString(out.String()) {
		t.Fatalf("output:\n%s", out.String())
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*")); len(left) != 0 {
		t.Fatalf("left behind %v", left)
	}
	cfg, err := parseArgs([]string{"fsync"}, noEnv)
	if err != nil || cfg.command != "fsync" || cfg.requests != defaultFsyncRequests {
		t.Fatalf("defaults: %+v %v", cfg, err)
	}
	if _, err := parseArgs([]string{"fsync", "reads"}, noEnv); err == nil {
		t.Fatalf("fsync with a scenario was accepted")
	}
	errOut.Reset()
	if code := run(context.Background(), []string{"--data", filepath.Join(dir, "missing"), "fsync"}, noEnv, &out, &errOut); code != exitFailed || !bytes.Contains(errOut.Bytes(), []byte("--data")) {
		t.Fatalf("a missing --data: exit %d, %s", code, errOut.String())
	}
}
