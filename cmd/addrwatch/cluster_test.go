package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// A backup file as the admin API sends it: the magic, then binary data.
var testBackup = append([]byte(backupMagic+"\x00\x01v1"), bytes.Repeat([]byte{0xff, 0x00, 'x'}, 50_000)...)

// fileServer is a fake admin API for the backup and restore transfers: it
// records every request and answers with a canned status, content type and
// body.
type fileServer struct {
	*httptest.Server
	status      int
	contentType string
	body        []byte
	delay       time.Duration

	mu       sync.Mutex
	requests []request
}

func newFileServer(t *testing.T, status int, contentType string, body []byte) *fileServer {
	t.Helper()
	f := &fileServer{status: status, contentType: contentType, body: body}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.requests = append(f.requests, request{r.Method, r.URL.EscapedPath(), r.Header.Clone(), data})
		f.mu.Unlock()
		time.Sleep(f.delay)
		if f.contentType != "" {
			w.Header().Set("Content-Type", f.contentType)
		}
		w.WriteHeader(f.status)
		w.Write(f.body)
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *fileServer) seen() []request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]request(nil), f.requests...)
}

func (f *fileServer) env() map[string]string {
	return map[string]string{
		"ADDRWATCH_ADMIN_URL":   f.URL,
		"ADDRWATCH_ADMIN_TOKEN": testAdminToken,
		"ADDRWATCH_DATA":        "/nonexistent-addrwatch-test-data",
	}
}

// assertOnlyFiles fails unless dir holds exactly names: no temporary file
// may be left behind.
func assertOnlyFiles(t *testing.T, dir string, names ...string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	if strings.Join(got, ",") != strings.Join(names, ",") {
		t.Errorf("%s holds %q, want %q", dir, got, names)
	}
}

func TestClusterBackup(t *testing.T) {
	srv := newFileServer(t, 200, "application/octet-stream", testBackup)
	dir := t.TempDir()
	file := filepath.Join(dir, "b.snap")

	got := runCLI(t, srv.env(), "cluster", "backup", file)
	if got.code != exitOK || got.stderr != "" {
		t.Fatalf("exit %d stderr %q", got.code, got.stderr)
	}
	if want := "wrote " + strconv.Itoa(len(testBackup)) + " bytes to " + file + "\n"; got.stdout != want {
		t.Errorf("stdout = %q, want %q", got.stdout, want)
	}
	seen := srv.seen()
	if len(seen) != 1 {
		t.Fatalf("server saw %d requests, want 1", len(seen))
	}
	req := seen[0]
	if req.method != "GET" || req.path != "/admin/v1/backup" || len(req.body) != 0 {
		t.Errorf("request = %s %s with %d body bytes, want GET /admin/v1/backup without a body", req.method, req.path, len(req.body))
	}
	if h := req.header.Get("Authorization"); h != "Bearer "+testAdminToken {
		t.Errorf("Authorization = %q", h)
	}
	data, err := os.ReadFile(file)
	if err != nil || !bytes.Equal(data, testBackup) {
		t.Fatalf("file holds %d bytes (err %v), want the %d bytes served", len(data), err, len(testBackup))
	}
	info, _ := os.Stat(file)
	if perm := info.Mode().Perm(); perm != 0o600 {
		t.Errorf("mode %v, want 0600", perm)
	}
	assertOnlyFiles(t, dir, "b.snap")
}

func TestClusterBackupJSON(t *testing.T) {
	srv := newFileServer(t, 200, "application/octet-stream", testBackup)
	file := filepath.Join(t.TempDir(), "b.snap")
	got := runCLI(t, srv.env(), "--json", "cluster", "backup", file)
	want := `{"bytes":` + strconv.Itoa(len(testBackup)) + `,"file":"` + file + `"}` + "\n"
	if got.code != exitOK || got.stdout != want {
		t.Errorf("exit %d stdout %q stderr %q, want %q", got.code, got.stdout, got.stderr, want)
	}
}

func TestClusterBackupKeepsExistingFile(t *testing.T) {
	srv := newFileServer(t, 200, "application/octet-stream", testBackup)
	dir := t.TempDir()
	file := filepath.Join(dir, "b.snap")
	if err := os.WriteFile(file, []byte("older backup"), 0o644); err != nil {
		t.Fatal(err)
	}

	got := runCLI(t, srv.env(), "cluster", "backup", file)
	want := "error: " + file + " already exists; pass --force to overwrite it\n"
	if got.code != exitFailure || got.stderr != want || got.stdout != "" {
		t.Errorf("exit %d stdout %q stderr %q, want exit 1 and %q", got.code, got.stdout, got.stderr, want)
	}
	if n := len(srv.seen()); n != 0 {
		t.Errorf("made %d requests although the file exists", n)
	}
	if data, _ := os.ReadFile(file); string(data) != "older backup" {
		t.Errorf("the existing file was changed")
	}

	got = runCLI(t, srv.env(), "cluster", "backup", "--force", file)
	if got.code != exitOK {
		t.Fatalf("--force: exit %d stderr %q", got.code, got.stderr)
	}
	data, _ := os.ReadFile(file)
	if !bytes.Equal(data, testBackup) {
		t.Errorf("--force did not replace the file")
	}
	info, _ := os.Stat(file)
	if perm := info.Mode().Perm(); perm != 0o600 {
		t.Errorf("mode after --force %v, want 0600", perm)
	}
	assertOnlyFiles(t, dir, "b.snap")
}

// TestClusterBackupRefusals checks that an answer which is not a complete
// backup file leaves no file behind, temporary or final.
func TestClusterBackupRefusals(t *testing.T) {
	for _, tc := range []struct {
		name        string
		status      int
		contentType string
		body        string
		stderr      string
	}{
		{"server error body", 503, "application/json", `{"code":"HTTP_ERROR","error":"no leader is available"}`,
			"error: HTTP_ERROR: no leader is available (HTTP 503)\n"},
		{"not the server's error shape", 502, "text/html", `<html>bad gateway</html>`,
			"error: HTTP_502: Bad Gateway (HTTP 502)\n"},
		{"no magic", 200, "text/html", `<html>login page</html>`,
			"error: unexpected response from server: not a backup file (no AWSNAP header)\n"},
		{"shorter than the magic", 200, "application/octet-stream", `AWS`,
			"error: unexpected response from server: not a backup file (no AWSNAP header)\n"},
		{"empty", 200, "application/octet-stream", ``,
			"error: unexpected response from server: not a backup file (no AWSNAP header)\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newFileServer(t, tc.status, tc.contentType, []byte(tc.body))
			dir := t.TempDir()
			got := runCLI(t, srv.env(), "cluster", "backup", filepath.Join(dir, "b.snap"))
			if got.code != exitFailure || got.stderr != tc.stderr || got.stdout != "" {
				t.Errorf("exit %d stdout %q stderr %q, want exit 1 and %q", got.code, got.stdout, got.stderr, tc.stderr)
			}
			assertOnlyFiles(t, dir)
		})
	}
}

func TestClusterBackupTruncatedBody(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(len(testBackup)))
		w.Write(testBackup[:len(testBackup)/2]) // then the connection drops
	}))
	defer srv.Close()
	dir := t.TempDir()
	env := map[string]string{"ADDRWATCH_ADMIN_URL": srv.URL, "ADDRWATCH_ADMIN_TOKEN": testAdminToken}
	got := runCLI(t, env, "cluster", "backup", filepath.Join(dir, "b.snap"))
	if got.code != exitFailure || !strings.Contains(got.stderr, "write backup") || got.stdout != "" {
		t.Errorf("exit %d stdout %q stderr %q", got.code, got.stdout, got.stderr)
	}
	assertOnlyFiles(t, dir)
}

func TestClusterBackupMissingDirectory(t *testing.T) {
	srv := newFileServer(t, 200, "application/octet-stream", testBackup)
	got := runCLI(t, srv.env(), "cluster", "backup", filepath.Join(t.TempDir(), "no", "such", "b.snap"))
	if got.code != exitFailure || !strings.Contains(got.stderr, "create temporary file") {
		t.Errorf("exit %d stderr %q", got.code, got.stderr)
	}
	if n := len(srv.seen()); n != 0 {
		t.Errorf("made %d requests with nowhere to write", n)
	}
}

func writeBackup(t *testing.T, data []byte) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "b.snap")
	if err := os.WriteFile(file, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

func TestClusterRestore(t *testing.T) {
	srv := newFileServer(t, 200, "application/json", []byte(`{"restored":true}`))
	file := writeBackup(t, testBackup)

	got := runCLI(t, srv.env(), "cluster", "restore", file)
	if got.code != exitOK || got.stderr != "" {
		t.Fatalf("exit %d stderr %q", got.code, got.stderr)
	}
	if want := "restored " + file + " (" + strconv.Itoa(len(testBackup)) + " bytes)\n"; got.stdout != want {
		t.Errorf("stdout = %q, want %q", got.stdout, want)
	}
	seen := srv.seen()
	if len(seen) != 1 {
		t.Fatalf("server saw %d requests, want 1", len(seen))
	}
	req := seen[0]
	if req.method != "POST" || req.path != "/admin/v1/restore" {
		t.Errorf("request = %s %s, want POST /admin/v1/restore", req.method, req.path)
	}
	if !bytes.Equal(req.body, testBackup) {
		t.Errorf("sent %d body bytes, want the file's %d bytes unchanged", len(req.body), len(testBackup))
	}
	if h := req.header.Get("Content-Type"); h != "application/octet-stream" {
		t.Errorf("Content-Type = %q", h)
	}
	if h := req.header.Get("Content-Length"); h != strconv.Itoa(len(testBackup)) {
		t.Errorf("Content-Length = %q, want %d", h, len(testBackup))
	}
	if h := req.header.Get("Authorization"); h != "Bearer "+testAdminToken {
		t.Errorf("Authorization = %q", h)
	}

	got = runCLI(t, srv.env(), "cluster", "restore", file, "--json")
	if got.code != exitOK || got.stdout != `{"restored":true}`+"\n" {
		t.Errorf("--json: exit %d stdout %q stderr %q", got.code, got.stdout, got.stderr)
	}
}

func TestClusterRestoreServerAnswers(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status int
		body   string
		stderr string
	}{
		{"refused", 422, `{"code":"VALIDATION_ERROR","error":"the backup was not restored: bad checksum"}`,
			"error: VALIDATION_ERROR: the backup was not restored: bad checksum (HTTP 422)\n"},
		{"too large", 413, `<html>too large</html>`, "error: HTTP_413: Request Entity Too Large (HTTP 413)\n"},
		{"not restored", 200, `{"restored":false}`, "error: unexpected response from server: restored is not true\n"},
		{"not JSON", 200, `ok`, "error: unexpected response from server: invalid character 'o' looking for beginning of value\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newFileServer(t, tc.status, "application/json", []byte(tc.body))
			got := runCLI(t, srv.env(), "cluster", "restore", writeBackup(t, testBackup))
			if got.code != exitFailure || got.stderr != tc.stderr || got.stdout != "" {
				t.Errorf("exit %d stdout %q stderr %q, want exit 1 and %q", got.code, got.stdout, got.stderr, tc.stderr)
			}
		})
	}
}

// TestClusterRestoreChecksTheFileFirst checks that a file which cannot be a
// backup is refused before anything is uploaded.
func TestClusterRestoreChecksTheFileFirst(t *testing.T) {
	srv := newFileServer(t, 200, "application/json", []byte(`{"restored":true}`))
	for _, tc := range []struct {
		name string
		file string
		want string
	}{
		{"missing", filepath.Join(t.TempDir(), "nope.snap"), "no such file or directory"},
		{"directory", t.TempDir(), "is not a regular file"},
		{"wrong magic", writeBackup(t, []byte("PK\x03\x04 a zip file")), "is not an addrwatch backup file (no AWSNAP header)"},
		{"empty", writeBackup(t, nil), "is not an addrwatch backup file (no AWSNAP header)"},
	} {
		got := runCLI(t, srv.env(), "cluster", "restore", tc.file)
		if got.code != exitFailure || !strings.Contains(got.stderr, tc.want) {
			t.Errorf("%s: exit %d stderr %q, want exit 1 and %q", tc.name, got.code, got.stderr, tc.want)
		}
	}
	if n := len(srv.seen()); n != 0 {
		t.Errorf("made %d requests for files that are not backups", n)
	}
}

// TestTransfersUseTheLongTimeout checks that backup and restore use the
// transfer client while other commands keep the short request timeout.
func TestTransfersUseTheLongTimeout(t *testing.T) {
	if transferTimeout != 10*time.Minute {
		t.Errorf("transferTimeout = %v, want 10m", transferTimeout)
	}
	short := &http.Client{Timeout: 50 * time.Millisecond}
	long := &http.Client{Timeout: 10 * time.Second}
	runSlow := func(srv *fileServer, args ...string) (int, string) {
		var stdout, stderr bytes.Buffer
		env := srv.env()
		code := runWithClients(context.Background(), args, func(k string) string { return env[k] }, &stdout, &stderr, short, long)
		return code, stderr.String()
	}

	backupSrv := newFileServer(t, 200, "application/octet-stream", testBackup)
	backupSrv.delay = 200 * time.Millisecond
	if code, stderr := runSlow(backupSrv, "cluster", "backup", filepath.Join(t.TempDir(), "b.snap")); code != exitOK {
		t.Errorf("slow backup: exit %d stderr %q", code, stderr)
	}
	restoreSrv := newFileServer(t, 200, "application/json", []byte(`{"restored":true}`))
	restoreSrv.delay = 200 * time.Millisecond
	if code, stderr := runSlow(restoreSrv, "cluster", "restore", writeBackup(t, testBackup)); code != exitOK {
		t.Errorf("slow restore: exit %d stderr %q", code, stderr)
	}
	statusSrv := newFileServer(t, 200, "application/json", []byte(`{}`))
	statusSrv.delay = 200 * time.Millisecond
	if code, stderr := runSlow(statusSrv, "cluster", "status"); code != exitFailure || !strings.Contains(stderr, "Client.Timeout exceeded") {
		t.Errorf("slow status: exit %d stderr %q, want the short timeout", code, stderr)
	}
}

func TestClusterHelp(t *testing.T) {
	got := runCLI(t, nil, "cluster", "transfer", "--help")
	if !strings.Contains(got.stdout, "Usage:\n  addrwatch cluster transfer [ID] [flags]\n") {
		t.Errorf("transfer usage line:\n%s", got.stdout)
	}
	got = runCLI(t, nil, "cluster", "backup", "--help")
	if !strings.Contains(got.stdout, "Usage:\n  addrwatch cluster backup FILE [--force] [flags]\n") || !strings.Contains(got.stdout, "--force") {
		t.Errorf("backup help:\n%s", got.stdout)
	}
	got = runCLI(t, nil, "cluster", "--help")
	for _, sub := range []string{"status", "add", "remove", "transfer", "snapshot", "backup", "restore"} {
		if !strings.Contains(got.stdout, "  cluster "+sub+" ") {
			t.Errorf("cluster --help does not list %q:\n%s", sub, got.stdout)
		}
	}
}

// TestClusterMoveSlot: a slot number or an account ID, and the group; the
// request names one of them, and the answer is said in a line.
func TestClusterMoveSlot(t *testing.T) {
	for arg, want := range map[string]string{
		"1234":             `{"slot":1234,"to":2}`,
		"ubzsol7pg62goqx4": `{"account":"ubzsol7pg62goqx4","to":2}`,
	} {
		s := newServers(t, 202, `{"slot":1234,"move":77,"from":0,"to":2}`)
		got := runCLI(t, s.env, "cluster", "move-slot", arg, "2")
		if got.code != 0 || got.stdout != "slot 1234 is moving from group 0 to group 2\n" {
			t.Fatalf("%s: exit %d, stdout %q, stderr %q", arg, got.code, got.stdout, got.stderr)
		}
		req := s.admin.only(t)
		if req.method != "POST" || req.path != "/admin/v1/cluster/slots/move" {
			t.Fatalf("%s: sent %s %s", arg, req.method, req.path)
		}
		assertJSONEqual(t, req.body, want)
	}
	s := newServers(t, 202, `{}`)
	for _, args := range [][]string{{"1234", "two"}, {"1234", "-1"}, {"", "1"}} {
		if got := runCLI(t, s.env, append([]string{"cluster", "move-slot"}, args...)...); got.code == 0 {
			t.Errorf("move-slot %v accepted", args)
		}
	}
	if n := len(s.admin.seen()); n != 0 {
		t.Errorf("bad arguments sent %d requests", n)
	}
}

// TestClusterTransferGroup: --group names the group of a sharded cluster.
func TestClusterTransferGroup(t *testing.T) {
	s := newServers(t, 200, `{"transferred":true}`)
	got := runCLI(t, s.env, "cluster", "transfer", "n2", "--group", "1")
	if got.code != 0 || got.stdout != "leadership of group 1 transferred to n2\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q", got.code, got.stdout, got.stderr)
	}
	assertJSONEqual(t, s.admin.only(t).body, `{"id":"n2","group":1}`)
}

func TestClusterDrain(t *testing.T) {
	for args, want := range map[string]string{"": `{"id":"n2","drain":true}`, "--undo": `{"id":"n2","drain":false}`} {
		s := newServers(t, 200, `{"id":"n2","draining":true}`)
		cmd := []string{"cluster", "drain", "n2"}
		if args != "" {
			cmd = append(cmd, args)
		}
		if got := runCLI(t, s.env, cmd...); got.code != 0 || !strings.HasPrefix(got.stdout, "n2 ") {
			t.Fatalf("%v: exit %d, stdout %q, stderr %q", cmd, got.code, got.stdout, got.stderr)
		}
		req := s.admin.only(t)
		if req.path != "/admin/v1/cluster/drain" {
			t.Fatalf("sent %s %s", req.method, req.path)
		}
		assertJSONEqual(t, req.body, want)
	}
}
