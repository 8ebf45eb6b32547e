package deploy

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// imageUser is the Containerfile's USER: numeric, not root.
const imageUser = "65532:65532"

// TestContainerImageContentsWithoutRunningIt builds deploy/container's
// image with make image and podman, in a storage of its own (the vfs
// driver, which works wherever podman does), and checks what it holds
// without running it: these test machines refuse a container runtime's
// rlimits, so no container is started. podman image inspect gives the
// user, entrypoint, environment, volume and ports; podman save gives the
// layers, which the test lists in its log and reads: the static server
// and CLI (built with -trimpath), the CA bundle and the data dir owned by
// the image's user, and nothing else (no shell, no /bin).
func TestContainerImageContentsWithoutRunningIt(t *testing.T) {
	t.Parallel()
	podmanPath := requireTool(t, "podman", "podman")
	dir := t.TempDir()
	// podman refuses a runroot longer than 50 characters, which a test's
	// temporary directory easily is.
	runroot, err := os.MkdirTemp("/tmp", "addrwatch-podman-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(runroot) })
	storage := filepath.Join(dir, "storage")
	podman := []string{podmanPath, "--root", storage, "--runroot", runroot, "--storage-driver", "vfs"}
	if os.Geteuid() != 0 {
		// Rootless, the layers' files belong to the user's subordinate
		// ids, which only podman's own namespace may remove.
		t.Cleanup(func() { runErr(dir, nil, podmanPath, "unshare", "rm", "-rf", storage) })
	}
	tag := fmt.Sprintf("localhost/addrwatch:test-%d", os.Getpid())

	// The outer make's variables (make test runs this) would reach the
	// inner one; it gets the environment without them.
	var env []string
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); name != "MAKEFLAGS" && name != "MFLAGS" && name != "MAKELEVEL" {
			env = append(env, kv)
		}
	}
	out := run(t, repoRoot, env, "make", "--no-print-directory", "image", "BIN="+filepath.Join(dir, "bin"), "IMAGE="+tag, "PODMAN="+strings.Join(podman, " "))
	t.Logf("make image:\n%s", lastLines(out, 3))

	checkImageConfig(t, run(t, dir, nil, podman[0], append(podman[1:], "image", "inspect", tag)...))

	archive := filepath.Join(dir, "image.tar")
	run(t, dir, nil, podman[0], append(podman[1:], "save", "--format", "oci-archive", "--output", archive, tag)...)
	tree, err := filepath.Abs(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	files, listing, err := readImageArchive(archive, tree)
	if err != nil {
		t.Fatalf("read the saved image: %v", err)
	}
	t.Logf("the image's layers (mode, owner, size, path):\n%s", listing)
	checkImageFiles(t, files, tree)
}

// checkImageConfig checks podman image inspect's answer.
func checkImageConfig(t *testing.T, inspect string) {
	t.Helper()
	var images []struct {
		Config struct {
			User         string
			Entrypoint   []string
			Cmd          []string
			Env          []string
			Volumes      map[string]struct{}
			ExposedPorts map[string]struct{}
		}
	}
	if err := json.Unmarshal([]byte(inspect), &images); err != nil || len(images) != 1 {
		t.Fatalf("podman image inspect: %v\n%s", err, inspect)
	}
	c := images[0].Config
	if c.User != imageUser {
		t.Errorf("User is %q, not %s (numeric, not root)", c.User, imageUser)
	}
	if !slices.Equal(c.Entrypoint, []string{"/addrwatchd"}) || len(c.Cmd) != 0 {
		t.Errorf("Entrypoint %q with Cmd %q, not [/addrwatchd] alone (flags given to podman run go to the server)", c.Entrypoint, c.Cmd)
	}
	for _, want := range []string{"ADDRWATCH_HTTP=0.0.0.0:8080", "ADDRWATCH_ADMIN=0.0.0.0:8081", "ADDRWATCH_DATA=/var/lib/addrwatch"} {
		if !slices.Contains(c.Env, want) {
			t.Errorf("Env %q lacks %s: the server's loopback default is out of reach from outside the container", c.Env, want)
		}
	}
	if _, ok := c.Volumes["/var/lib/addrwatch"]; !ok || len(c.Volumes) != 1 {
		t.Errorf("Volumes %v, not the data dir /var/lib/addrwatch alone", c.Volumes)
	}
	for _, port := range []string{"8080/tcp", "8081/tcp", "7000/tcp"} {
		if _, ok := c.ExposedPorts[port]; !ok {
			t.Errorf("ExposedPorts %v lacks %s", c.ExposedPorts, port)
		}
	}
}

// checkImageFiles checks the files of the image's layers, by path
// without a leading slash.
func checkImageFiles(t *testing.T, files map[string]imageFile, tree string) {
	t.Helper()
	var regular []string
	for path, f := range files {
		if f.Regular {
			regular = append(regular, path)
		}
		if f.Link != "" {
			t.Errorf("%s is a link to %s: the image has no links", path, f.Link)
		}
		if path != "var/lib/addrwatch" && (f.UID != 0 || f.GID != 0) {
			t.Errorf("/%s belongs to %d:%d: only the data dir is the server's, the rest root's", path, f.UID, f.GID)
		}
	}
	slices.Sort(regular)
	if want := []string{"addrwatch", "addrwatchd", "etc/ssl/certs/ca-certificates.crt"}; !slices.Equal(regular, want) {
		t.Errorf("the image's files are %q, not %q", regular, want)
	}
	for _, path := range []string{"bin/sh", "bin", "usr/bin/sh", "bin/busybox"} {
		if _, ok := files[path]; ok {
			t.Errorf("the image holds /%s: it has no shell", path)
		}
	}
	for _, bin := range []string{"addrwatchd", "addrwatch"} {
		f := files[bin]
		if f.Mode&0o111 == 0 || f.Mode&0o022 != 0 {
			t.Errorf("/%s: mode %#o, not executable or writable by others than root", bin, f.Mode)
		}
		if !f.Static {
			t.Errorf("/%s is not a static ELF binary: FROM scratch has no loader or libc for it", bin)
		}
		if f.BuildPath {
			t.Errorf("/%s holds the path it was built in, %s: make image builds without -trimpath", bin, tree)
		}
	}
	if ca := files["etc/ssl/certs/ca-certificates.crt"]; !ca.PEMCerts {
		t.Errorf("/etc/ssl/certs/ca-certificates.crt holds no PEM certificate: the server's TLS calls out would trust nothing")
	}
	data, ok := files["var/lib/addrwatch"]
	if !ok || !data.Dir || fmt.Sprintf("%d:%d", data.UID, data.GID) != imageUser || data.Mode != 0o700 {
		t.Errorf("/var/lib/addrwatch is %+v, not a directory 0700 of %s", data, imageUser)
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
