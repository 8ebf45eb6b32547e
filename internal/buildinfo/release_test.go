package buildinfo

import (
	"bytes"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// releasePlatforms are the platforms the test's two releases build. make
// release builds linux/amd64 and linux/arm64; the test builds the host's
// one only, to keep make test's time (a cold build of one platform is
// about 90 s of CPU, the second release then reuses its compiled
// packages); ADDRWATCH_RELEASE_PLATFORMS=all builds what make release does.
func releasePlatforms() string {
	if os.Getenv("ADDRWATCH_RELEASE_PLATFORMS") == "all" {
		return ""
	}
	return "PLATFORMS=linux/" + runtime.GOARCH
}

// TestReleaseIsReproducible: make release, run in two clones of the same
// commit at two different paths, gives the same SHA256SUMS, and the
// binaries are static, name the commit in --version, and hold neither
// clone's path.
func TestReleaseIsReproducible(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the release twice (about 90 s of CPU): not a unit test")
	}
	if runtime.GOOS != "linux" {
		t.Skip("make release builds Linux binaries; the test runs them on Linux only")
	}
	for _, tool := range []string{"git", "make", "sha256sum"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("the release test needs %s on PATH: %v", tool, err)
		}
	}
	root := strings.TrimSpace(runIn(t, ".", "git", "rev-parse", "--show-toplevel"))
	rev := strings.TrimSpace(runIn(t, root, "git", "rev-parse", "HEAD"))
	if dirty := runIn(t, root, "git", "status", "--porcelain", "--untracked-files=no"); dirty != "" {
		t.Logf("the tree has changes not committed; the releases are of the commit %s without them", rev)
	}

	var sums [2][]byte
	var clones [2]string
	for i := range clones {
		clones[i] = filepath.Join(t.TempDir(), []string{"first", "second-clone"}[i])
		runIn(t, root, "git", "clone", "-q", "--no-checkout", root, clones[i])
		runIn(t, clones[i], "git", "checkout", "-q", "--detach", rev)
		args := []string{"release", "DIST=" + filepath.Join(clones[i], "dist")}
		if p := releasePlatforms(); p != "" {
			args = append(args, p)
		}
		t.Logf("make %s in %s:\n%s", strings.Join(args, " "), clones[i], runIn(t, clones[i], "make", args...))
		var err error
		if sums[i], err = os.ReadFile(filepath.Join(clones[i], "dist", "SHA256SUMS")); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(sums[0], sums[1]) {
		t.Fatalf("two releases of %s differ:\n%s\nand\n%s", rev, sums[0], sums[1])
	}

	dist := filepath.Join(clones[1], "dist")
	for line := range strings.Lines(string(sums[1])) {
		sum, name, ok := strings.Cut(strings.TrimSpace(line), "  ")
		if !ok {
			t.Fatalf("SHA256SUMS line %q", line)
		}
		bin, err := os.ReadFile(filepath.Join(dist, name))
		if err != nil {
			t.Fatal(err)
		}
		if got := sha256.Sum256(bin); hex.EncodeToString(got[:]) != sum {
			t.Errorf("%s: SHA256SUMS says %s, the file is %x", name, sum, got)
		}
		for _, clone := range clones {
			if bytes.Contains(bin, []byte(clone)) {
				t.Errorf("%s holds the build path %s", name, clone)
			}
		}
		assertStatic(t, filepath.Join(dist, name))
	}
	for _, cmd := range []string{"addrwatchd", "addrwatch"} {
		out := runIn(t, dist, filepath.Join(dist, cmd+"-linux-"+runtime.GOARCH), "--version")
		t.Logf("%s", out)
		if !strings.HasPrefix(out, cmd+" v0.0.0-") || !strings.Contains(out, "commit "+rev) || !strings.Contains(out, "modified false") {
			t.Errorf("%s --version: %q, want the commit %s, not modified", cmd, out, rev)
		}
	}
}

// assertStatic checks path is an ELF executable that names no dynamic
// loader and no shared library.
func assertStatic(t *testing.T, path string) {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			t.Errorf("%s is linked dynamically (%v)", path, p.Type)
		}
	}
}

// runIn runs name in dir and returns its output; a failure fails the test
// with the output.
func runIn(t *testing.T, dir, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s in %s: %v\n%s", name, strings.Join(args, " "), dir, err, out)
	}
	return string(out)
}
