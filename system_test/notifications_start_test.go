//go:build unix

package system_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The notify key: made 0600 in the data dir on first start; an explicit
// --notify-key that is missing, or readable by others, is refused.
func TestNotifyKeyAtStart(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	info, err := os.Stat(filepath.Join(s.Dir, "notify-key"))
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("<data>/notify-key: %v %v", info, err)
	}
	s.stop()

	missing := filepath.Join(t.TempDir(), "no-such-key")
	code, out := s.startRefused("--notify-key", missing)
	if code != 1 || !strings.Contains(out, "--notify-key") {
		t.Errorf("a missing --notify-key: exit %d\n%s", code, out)
	}
	open := filepath.Join(t.TempDir(), "open-key")
	if err := os.WriteFile(open, []byte(strings.Repeat("ab", 32)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out = s.startRefused("--notify-key", open)
	if code != 1 || !strings.Contains(out, "chmod 600") {
		t.Errorf("a --notify-key others may read: exit %d\n%s", code, out)
	}
	private := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(private, []byte(strings.Repeat("cd", 32)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s.start("--notify-key", private)
}
