package main

import (
	"bytes"
	"context"
	"flag"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestUsageErrorsExit2WithoutARequest(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string // in stderr
	}{
		{nil, "error: missing command\nRun 'addrwatch --help' for usage.\n"},
		{[]string{"bogus"}, `unknown command "bogus"`},
		{[]string{"key"}, "error: \"key\" needs a subcommand\nRun 'addrwatch key --help' for usage.\n"},
		{[]string{"key", "rotate"}, `unknown subcommand "rotate" for "key"`},
		{[]string{"--nope", "key", "list"}, "flag provided but not defined: -nope"},
		{[]string{"key", "list", "--nope"}, "Run 'addrwatch key list --help' for usage."},
		{[]string{"key", "list", "extra"}, "key list takes no arguments, got 1 argument(s)"},
		{[]string{"key", "revoke"}, "key revoke takes KEY_ID, got 0 argument(s)"},
		{[]string{"key", "revoke", "a", "b"}, "key revoke takes KEY_ID, got 2 argument(s)"},
		{[]string{"key", "revoke", ""}, "KEY_ID must not be empty"},
		{[]string{"key", "revoke", ".."}, `KEY_ID ".." is not a valid ID`},
		{[]string{"key", "create", "--name", "n"}, "--capability is required (one of read, write)"},
		{[]string{"key", "create", "--capability", "admin", "--name", "n"}, `--capability must be one of read, write, got "admin"`},
		{[]string{"key", "create", "--capability", "read"}, "--name is required"},
		{[]string{"account", "create", "--password", "p"}, "--plan is required"},
		{[]string{"account", "create", "--plan", "gold", "--password", "p"}, `--plan must be one of base, extended, got "gold"`},
		{[]string{"account", "create", "--plan", "base"}, "--password is required\nRun 'addrwatch account create --help' for usage."},
		{[]string{"grant", "portfolio", "c1"}, "grant portfolio takes CARD_ID LEVEL, got 1 argument(s)"},
		{[]string{"grant", "portfolio", "c1", "admin"}, `LEVEL must be one of none, read, write, got "admin"`},
		{[]string{"grant", "space", ".", "read"}, `SPACE_ID "." is not a valid ID`},
		{[]string{"plan", "set", "gold"}, `PLAN must be one of base, extended, got "gold"`},
		{[]string{"plan", "set"}, "plan set takes PLAN, got 0 argument(s)"},
		{[]string{"password", "change", "--new-password", "n"}, "--current-password is required"},
		{[]string{"password", "change", "--current-password", "c"}, "--new-password is required"},
		{[]string{"owner-secret", "rotate"}, "--current-password is required\nRun 'addrwatch owner-secret rotate --help' for usage."},
		{[]string{"key", "list", "--json=maybe"}, "must be true or false"},
		{[]string{"key", "list", "--server", "ftp://x"}, "--server must be an http or https base URL"},
		{[]string{"cluster", "status", "--admin", "http://h:1/?q=1"}, "--admin must be an http or https base URL"},
		{[]string{"help", "key", "nope"}, `no help for "key nope": unknown command`},
		{[]string{"cluster"}, "error: \"cluster\" needs a subcommand\nRun 'addrwatch cluster --help' for usage.\n"},
		{[]string{"cluster", "add", "n4"}, "cluster add takes ID RAFT_ADDR, got 1 argument(s)"},
		{[]string{"cluster", "add", "n4", "nohost"}, `RAFT_ADDR must be host:port, got "nohost"`},
		{[]string{"cluster", "add", "n4", ":7000"}, `RAFT_ADDR must be host:port, got ":7000"`},
		{[]string{"cluster", "add", "..", "h:1"}, `ID ".." is not a valid ID`},
		{[]string{"cluster", "remove"}, "cluster remove takes ID, got 0 argument(s)"},
		{[]string{"cluster", "remove", ""}, "ID must not be empty\nRun 'addrwatch cluster remove --help' for usage."},
		{[]string{"cluster", "transfer", "a", "b"}, "cluster transfer takes [ID], got 2 argument(s)"},
		{[]string{"cluster", "transfer", "."}, `ID "." is not a valid ID`},
		{[]string{"cluster", "snapshot", "now"}, "cluster snapshot takes no arguments, got 1 argument(s)"},
		{[]string{"cluster", "backup"}, "cluster backup takes FILE, got 0 argument(s)"},
		{[]string{"cluster", "backup", ""}, "FILE must not be empty"},
		{[]string{"cluster", "backup", "f.snap", "--force=maybe"}, "Run 'addrwatch cluster backup --help' for usage."},
		{[]string{"cluster", "restore"}, "cluster restore takes FILE, got 0 argument(s)"},
		{[]string{"cluster", "recover", "--data", "d"}, "--node-id is required"},
		{[]string{"cluster", "recover", "--data", "d", "--node-id", "n1", "--peers", "n1=not-an-addr"}, "--peers: peer \"n1=not-an-addr\""},
		{[]string{"cluster", "recover", "extra", "--data", "d", "--node-id", "n1"}, "cluster recover takes no arguments, got 1 argument(s)"},
		{[]string{"cluster", "restore", "a", "b"}, "cluster restore takes FILE, got 2 argument(s)"},
	} {
		s := newServers(t, 200, `{}`)
		got := runCLI(t, s.env, tc.args...)
		if got.code != exitUsage {
			t.Errorf("%q: exit %d, want %d (stderr %q)", tc.args, got.code, exitUsage, got.stderr)
		}
		if !strings.Contains(got.stderr, tc.want) {
			t.Errorf("%q: stderr %q, want it to contain %q", tc.args, got.stderr, tc.want)
		}
		if n := len(s.admin.seen()) + len(s.owner.seen()); n != 0 {
			t.Errorf("%q: made %d requests on a usage error", tc.args, n)
		}
	}
}

func TestTopHelpListsEveryCommand(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"-h"}, {"help"}} {
		got := runCLI(t, nil, args...)
		if got.code != exitOK || got.stderr != "" {
			t.Fatalf("%q: exit %d stderr %q", args, got.code, got.stderr)
		}
		for _, c := range commands {
			if !strings.Contains(got.stdout, "  "+c.name()+" ") {
				t.Errorf("%q does not list %q", args, c.name())
			}
		}
		for name := range globalFlagNames {
			if !strings.Contains(got.stdout, "--"+name) {
				t.Errorf("%q does not list --%s", args, name)
			}
		}
	}
}

// TestCommandHelp checks that every command's help, however it is asked for,
// shows its usage line, every flag it accepts and an example, and never a
// credential from the environment.
func TestCommandHelp(t *testing.T) {
	env := map[string]string{
		"ADDRWATCH_ADMIN_TOKEN":  testAdminToken,
		"ADDRWATCH_OWNER_SECRET": testOwnerSecret,
	}
	for _, c := range commands {
		fs, _ := c.flagSet(new(globals))
		var flags []string
		fs.VisitAll(func(f *flag.Flag) { flags = append(flags, "--"+f.Name) })
		asks := [][]string{
			append(append([]string{}, c.words...), "--help"),
			append(append([]string{}, c.words...), "-h"),
			append([]string{"help"}, c.words...),
		}
		for _, args := range asks {
			got := runCLI(t, env, args...)
			if got.code != exitOK || got.stderr != "" {
				t.Errorf("%q: exit %d stderr %q", args, got.code, got.stderr)
			}
			want := append([]string{"Usage:\n  addrwatch " + c.name(), "Example:\n  addrwatch " + c.name()}, flags...)
			for _, w := range want {
				if !strings.Contains(got.stdout, w) {
					t.Errorf("%q: help lacks %q:\n%s", args, w, got.stdout)
				}
			}
			if strings.Contains(got.stdout, testAdminToken) || strings.Contains(got.stdout, testOwnerSecret) {
				t.Errorf("%q: help shows a credential", args)
			}
		}
	}
}

func TestGroupHelp(t *testing.T) {
	for _, args := range [][]string{{"grant", "--help"}, {"grant", "-h"}, {"help", "grant"}} {
		got := runCLI(t, nil, args...)
		if got.code != exitOK || !strings.Contains(got.stdout, "grant portfolio") || !strings.Contains(got.stdout, "grant space") {
			t.Errorf("%q: exit %d stdout %q", args, got.code, got.stdout)
		}
	}
}

// TestGlobalFlagsAnywhere checks that global flags work before the command,
// after it and after its positional arguments.
func TestGlobalFlagsAnywhere(t *testing.T) {
	s := newServers(t, 204, "")
	env := map[string]string{"ADDRWATCH_DATA": "/nonexistent-addrwatch-test-data"}
	for _, args := range [][]string{
		{"--server", s.owner.URL, "--owner-secret", "sec", "key", "revoke", "k1"},
		{"key", "revoke", "k1", "--server", s.owner.URL, "--owner-secret", "sec"},
		{"--server", s.owner.URL, "key", "revoke", "k1", "--owner-secret", "sec"},
	} {
		got := runCLI(t, env, args...)
		if got.code != exitOK {
			t.Errorf("%q: exit %d stderr %q", args, got.code, got.stderr)
		}
	}
	for _, req := range s.owner.seen() {
		if req.header.Get("Authorization") != "Bearer sec" || req.path != "/owner/v1/keys/k1" {
			t.Errorf("request %s %s auth %q", req.method, req.path, req.header.Get("Authorization"))
		}
	}
	if n := len(s.owner.seen()); n != 3 {
		t.Errorf("owner server saw %d requests, want 3", n)
	}
}

func TestFlagOverridesEnvironment(t *testing.T) {
	s := newServers(t, 200, `{"keys":[]}`)
	elsewhere := newFakeServer(t, 200, `{"keys":[]}`)
	got := runCLI(t, s.env, "key", "list", "--server", elsewhere.URL, "--owner-secret", "from-flag")
	if got.code != exitOK {
		t.Fatalf("exit %d stderr %q", got.code, got.stderr)
	}
	if len(s.owner.seen()) != 0 {
		t.Errorf("the environment's server was used despite --server")
	}
	if h := elsewhere.only(t).header.Get("Authorization"); h != "Bearer from-flag" {
		t.Errorf("Authorization = %q, want the flag's secret", h)
	}
}

func TestBaseURLForms(t *testing.T) {
	s := newServers(t, 200, `{"keys":[]}`)
	host := strings.TrimPrefix(s.owner.URL, "http://")
	for _, base := range []string{host, s.owner.URL + "/", s.owner.URL + "/prefix/"} {
		got := runCLI(t, s.env, "key", "list", "--server", base)
		if got.code != exitOK {
			t.Errorf("--server %q: exit %d stderr %q", base, got.code, got.stderr)
		}
	}
	seen := s.owner.seen()
	want := []string{"/owner/v1/keys", "/owner/v1/keys", "/prefix/owner/v1/keys"}
	for i, req := range seen {
		if i < len(want) && req.path != want[i] {
			t.Errorf("request %d path %q, want %q", i, req.path, want[i])
		}
	}
}

// TestAdminTokenFromDataDir checks the fallback a default server sets up: a
// generated token in <data>/admin-token, used when neither flag nor
// environment names one.
func TestAdminTokenFromDataDir(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, adminTokenFile), []byte("from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"--data flag", nil, []string{"--data", dir}, "from-file"},
		{"ADDRWATCH_DATA", map[string]string{"ADDRWATCH_DATA": dir}, nil, "from-file"},
		{"env token wins over the file", map[string]string{"ADDRWATCH_ADMIN_TOKEN": "from-env"}, []string{"--data", dir}, "from-env"},
		{"flag token wins over env", map[string]string{"ADDRWATCH_ADMIN_TOKEN": "from-env"}, []string{"--admin-token", "from-flag"}, "from-flag"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			admin := newFakeServer(t, 204, "")
			env := map[string]string{"ADDRWATCH_ADMIN_URL": admin.URL}
			for k, v := range tc.env {
				env[k] = v
			}
			got := runCLI(t, env, append([]string{"snapshot"}, tc.args...)...)
			if got.code != exitOK {
				t.Fatalf("exit %d stderr %q", got.code, got.stderr)
			}
			if h := admin.only(t).header.Get("Authorization"); h != "Bearer "+tc.want {
				t.Errorf("Authorization = %q, want Bearer %s", h, tc.want)
			}
		})
	}
}

func TestMissingCredentialsAreUsageErrors(t *testing.T) {
	empty := t.TempDir()
	if err := os.WriteFile(filepath.Join(empty, adminTokenFile), []byte(" \n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"snapshot", "--data", t.TempDir()}, "no admin token: pass --admin-token"},
		{[]string{"snapshot", "--data", empty}, "is empty"},
		{[]string{"key", "list"}, "no owner secret: pass --owner-secret or set ADDRWATCH_OWNER_SECRET"},
	} {
		got := runCLI(t, nil, tc.args...)
		if got.code != exitUsage || !strings.Contains(got.stderr, tc.want) {
			t.Errorf("%q: exit %d stderr %q, want exit 2 and %q", tc.args, got.code, got.stderr, tc.want)
		}
	}
}

// TestRequestTimeout checks that a server that never answers ends the
// command with exit 1 instead of hanging it. The real bound is 10s; the test
// uses a shorter one through the same code path.
func TestRequestTimeout(t *testing.T) {
	if requestTimeout != 10*time.Second {
		t.Errorf("requestTimeout = %v, want 10s", requestTimeout)
	}
	release := make(chan struct{})
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-release }))
	defer hang.Close()
	defer close(release)

	var stdout, stderr bytes.Buffer
	env := map[string]string{"ADDRWATCH_OWNER_SECRET": testOwnerSecret}
	client := &http.Client{Timeout: 50 * time.Millisecond}
	code := runWithClient(context.Background(), []string{"key", "list", "--server", hang.URL},
		func(k string) string { return env[k] }, &stdout, &stderr, client)
	if code != exitFailure || !strings.Contains(stderr.String(), "Client.Timeout exceeded") {
		t.Errorf("exit %d stderr %q, want exit 1 and a timeout", code, stderr.String())
	}
}

// --version prints the build and sends no request.
func TestVersionPrintsTheBuild(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := runWithClient(context.Background(), []string{"--version"}, func(string) string { return "" }, &stdout, &stderr, nil)
	if code != exitOK || !strings.HasPrefix(stdout.String(), "addrwatch ") || !strings.Contains(stdout.String(), "(commit ") || stderr.Len() != 0 {
		t.Errorf("--version: exit %d, %q, %q", code, stdout.String(), stderr.String())
	}
}
