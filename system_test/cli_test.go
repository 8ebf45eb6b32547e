package system_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// owCLIResult is one run of the CLI.
type owCLIResult struct {
	code           int
	stdout, stderr string
}

// owCLI runs the CLI with args and an environment cleared of ADDRWATCH_*
// plus env (NAME=value pairs).
func owCLI(t testing.TB, env []string, args ...string) owCLIResult {
	t.Helper()
	cmd := exec.Command(cliBinary(t), args...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "ADDRWATCH_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, env...)
	cmd.Dir = t.TempDir() // no ./data to find an admin token in
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if err != nil {
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			t.Fatalf("run addrwatch %v: %v", args, err)
		}
		code = exit.ExitCode()
	}
	return owCLIResult{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

// owCLIOK runs the CLI and fails unless it exits 0.
func owCLIOK(t testing.TB, env []string, args ...string) owCLIResult {
	t.Helper()
	r := owCLI(t, env, args...)
	if r.code != 0 {
		t.Fatalf("addrwatch %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(owRedact(args), " "), r.code, r.stdout, r.stderr)
	}
	return r
}

// owRedact hides credentials in failure messages.
func owRedact(args []string) []string {
	out := slices.Clone(args)
	for i := 1; i < len(out); i++ {
		switch out[i-1] {
		case "--admin-token", "--owner-secret", "--password", "--current-password", "--new-password":
			out[i] = "<redacted>"
		}
	}
	return out
}

// owLines parses "name: value" lines.
func owLines(t testing.TB, out string, want ...string) map[string]string {
	t.Helper()
	got := map[string]string{}
	var order []string
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		name, value, found := strings.Cut(line, ": ")
		if !found {
			t.Fatalf("output line %q is not \"name: value\"; output:\n%s", line, out)
		}
		got[name] = value
		order = append(order, name)
	}
	if !slices.Equal(order, want) {
		t.Fatalf("output lines %v, want %v; output:\n%s", order, want, out)
	}
	return got
}

func TestCLIEndToEnd(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	admin := []string{"--admin", s.AdminURL, "--admin-token", s.AdminToken}
	const password = "cli password one"
	var acct account

	t.Run("AccountCreate", func(t *testing.T) {
		r := owCLIOK(t, nil, append([]string{"account", "create", "--plan", "base", "--password", password}, admin...)...)
		m := owLines(t, r.stdout, "account_id", "owner_secret")
		acct = account{ID: m["account_id"], OwnerSecret: m["owner_secret"], Password: password}
		if acct.ID == "" || acct.OwnerSecret == "" {
			t.Fatalf("empty account_id or owner_secret:\n%s", r.stdout)
		}
		if !strings.Contains(r.stderr, "shown only once") || strings.Contains(r.stderr, acct.OwnerSecret) {
			t.Fatalf("stderr %q", r.stderr)
		}
		// Server side: the secret and the password work.
		expect(t, do(t, "GET", s.URL+"/owner/v1/keys", acct.OwnerSecret, nil), http.StatusOK, "")
		expect(t, owSignIn(t, s, acct.ID, password), http.StatusCreated, "")

		// Global flags before the command, --json, and an extended plan.
		r = owCLIOK(t, nil, append(append([]string{}, admin...), "--json", "account", "create", "--plan", "extended", "--password", password)...)
		var created map[string]any
		if err := json.Unmarshal([]byte(r.stdout), &created); err != nil {
			t.Fatalf("--json output is not JSON: %v\n%s", err, r.stdout)
		}
		_, key := owKey(t, s, owString(t, created, "owner_secret"), "read", "check")
		if me := owMe(t, s, key); me["plan"] != "extended" || me["account_id"] != created["account_id"] {
			t.Fatalf("/v1/me of the --json account: %v", me)
		}

		// The environment instead of flags.
		r = owCLIOK(t, []string{"ADDRWATCH_ADMIN_URL=" + s.AdminURL, "ADDRWATCH_ADMIN_TOKEN=" + s.AdminToken}, "account", "create", "--plan", "base", "--password", password)
		owLines(t, r.stdout, "account_id", "owner_secret")

		// Refusals: the server's (exit 1) and the CLI's own (exit 2).
		r = owCLI(t, nil, "account", "create", "--plan", "base", "--password", password, "--admin", s.AdminURL, "--admin-token", "wrong-token")
		if r.code != 1 || r.stdout != "" || r.stderr != "error: UNAUTHORIZED: missing or invalid credentials (HTTP 401)\n" {
			t.Fatalf("wrong admin token: exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
		}
		r = owCLI(t, nil, append([]string{"account", "create", "--plan", "base", "--password", "short"}, admin...)...)
		if r.code != 1 || !strings.HasPrefix(r.stderr, "error: VALIDATION: ") || !strings.HasSuffix(r.stderr, "(HTTP 422)\n") {
			t.Fatalf("short password: exit %d stderr %q", r.code, r.stderr)
		}
		r = owCLI(t, nil, append([]string{"account", "create", "--plan", "gold", "--password", password}, admin...)...)
		if r.code != 2 || !strings.Contains(r.stderr, "--plan must be one of base, extended") {
			t.Fatalf("bad plan: exit %d stderr %q", r.code, r.stderr)
		}
		r = owCLI(t, nil, "account", "create", "--plan", "base", "--password", password, "--admin", s.AdminURL)
		if r.code != 2 || !strings.Contains(r.stderr, "no admin token") {
			t.Fatalf("no admin token: exit %d stderr %q", r.code, r.stderr)
		}
	})
	if acct.ID == "" {
		t.FailNow()
	}

	t.Run("Login", func(t *testing.T) {
		r := owCLIOK(t, nil, append([]string{"account", "create", "--plan", "base", "--password", password, "--login", "Cli.User@example.com"}, admin...)...)
		m := owLines(t, r.stdout, "account_id", "owner_secret")
		owner := []string{"--server", s.URL, "--owner-secret", m["owner_secret"]}
		r = owCLIOK(t, nil, append([]string{"account", "show"}, owner...)...)
		if got := owLines(t, r.stdout, "account_id", "login", "plan"); got["account_id"] != m["account_id"] || got["login"] != "Cli.User@example.com" {
			t.Fatalf("account show:\n%s", r.stdout)
		}
		r = owCLI(t, nil, append([]string{"account", "create", "--plan", "base", "--password", password, "--login", "CLI.USER@EXAMPLE.COM"}, admin...)...)
		if r.code != 1 || r.stderr != "error: CONFLICT: that login is taken (HTTP 409)\n" {
			t.Fatalf("taken login: exit %d stderr %q", r.code, r.stderr)
		}
		r = owCLIOK(t, nil, append([]string{"login", "set", "cli-user", "--current-password", password}, owner...)...)
		owLines(t, r.stdout, "login")
		expect(t, do(t, "POST", s.URL+"/owner/v1/sessions", "", map[string]any{"login": "CLI-USER", "password": password}), http.StatusCreated, "")
		expect(t, do(t, "POST", s.URL+"/owner/v1/sessions", "", map[string]any{"login": "Cli.User@example.com", "password": password}), http.StatusUnauthorized, "UNAUTHORIZED")
	})
	owner := []string{"--server", s.URL, "--owner-secret", acct.OwnerSecret}

	var writeKeyID, writeKey, readKeyID, readKey string
	t.Run("KeyCreateListRevoke", func(t *testing.T) {
		r := owCLIOK(t, nil, append([]string{"key", "create", "--capability", "write", "--name", "cli writer"}, owner...)...)
		m := owLines(t, r.stdout, "key_id", "key", "capability", "name")
		writeKeyID, writeKey = m["key_id"], m["key"]
		if m["capability"] != "write" || m["name"] != "cli writer" {
			t.Fatalf("key create output:\n%s", r.stdout)
		}
		if me := owMe(t, s, writeKey); me["key_id"] != writeKeyID || me["capability"] != "write" || me["account_id"] != acct.ID {
			t.Fatalf("/v1/me of the CLI key: %v", me)
		}
		r = owCLIOK(t, []string{"ADDRWATCH_SERVER=" + s.URL, "ADDRWATCH_OWNER_SECRET=" + acct.OwnerSecret}, "key", "create", "--capability", "read", "--name", "cli reader")
		m = owLines(t, r.stdout, "key_id", "key", "capability", "name")
		readKeyID, readKey = m["key_id"], m["key"]
		if me := owMe(t, s, readKey); me["capability"] != "read" {
			t.Fatalf("/v1/me of the CLI read key: %v", me)
		}

		r = owCLIOK(t, nil, append([]string{"key", "list"}, owner...)...)
		lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
		if len(lines) != 3 || !regexp.MustCompile(`^KEY_ID\s+CAPABILITY\s+NAME\s+CREATED_AT$`).MatchString(lines[0]) {
			t.Fatalf("key list output:\n%s", r.stdout)
		}
		for i, want := range []struct{ id, capability, name string }{{writeKeyID, "write", "cli writer"}, {readKeyID, "read", "cli reader"}} {
			fields := regexp.MustCompile(`\s{2,}`).Split(lines[i+1], -1)
			if len(fields) != 4 || fields[0] != want.id || fields[1] != want.capability || fields[2] != want.name || fields[3] == "" {
				t.Fatalf("key list row %d %q, want %+v", i, lines[i+1], want)
			}
		}
		if strings.Contains(r.stdout, owSecretPart(writeKey)) || strings.Contains(r.stdout, owSecretPart(readKey)) {
			t.Fatalf("key list shows a key:\n%s", r.stdout)
		}
		r = owCLIOK(t, nil, append([]string{"key", "list", "--json"}, owner...)...)
		var list struct {
			Keys []map[string]any `json:"keys"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &list); err != nil || len(list.Keys) != 2 {
			t.Fatalf("key list --json: %v\n%s", err, r.stdout)
		}

		r = owCLIOK(t, nil, append([]string{"key", "revoke", readKeyID}, owner...)...)
		if r.stdout != "revoked key "+readKeyID+"\n" {
			t.Fatalf("key revoke output %q", r.stdout)
		}
		owExpectUnauthorized(t, do(t, "GET", s.URL+"/v1/me", readKey, nil))
		owMe(t, s, writeKey)
		if ids := owKeyIDs(t, s, acct.OwnerSecret); !slices.Equal(ids, []string{writeKeyID}) {
			t.Fatalf("keys after CLI revoke: %v", ids)
		}
		r = owCLI(t, nil, append([]string{"key", "revoke", readKeyID}, owner...)...)
		if r.code != 1 || r.stderr != "error: NOT_FOUND: key not found (HTTP 404)\n" {
			t.Fatalf("revoking a revoked key: exit %d stderr %q", r.code, r.stderr)
		}
		r = owCLI(t, nil, append([]string{"key", "create", "--capability", "admin", "--name", "x"}, owner...)...)
		if r.code != 2 {
			t.Fatalf("bad capability: exit %d stderr %q", r.code, r.stderr)
		}
		r = owCLI(t, nil, "key", "list", "--server", s.URL)
		if r.code != 2 || !strings.Contains(r.stderr, "no owner secret") {
			t.Fatalf("no owner secret: exit %d stderr %q", r.code, r.stderr)
		}
		// An API key is not an owner secret.
		r = owCLI(t, nil, "key", "list", "--server", s.URL, "--owner-secret", writeKey)
		if r.code != 1 || r.stderr != "error: UNAUTHORIZED: missing or invalid credentials (HTTP 401)\n" {
			t.Fatalf("key list with an API key: exit %d stderr %q", r.code, r.stderr)
		}
	})
	if writeKey == "" {
		t.FailNow()
	}

	t.Run("GrantPortfolio", func(t *testing.T) {
		card := owOwnerCard(t, s, acct.OwnerSecret, owAddress(300), "cli card")
		id := card["id"].(string)
		owExpectError(t, do(t, "GET", s.URL+"/v1/portfolio/cards/"+id, writeKey, nil), http.StatusNotFound, "NOT_FOUND", "")

		r := owCLIOK(t, nil, append([]string{"grant", "portfolio", id, "read"}, owner...)...)
		if r.stdout != "Account card "+id+": grant read\n" {
			t.Fatalf("grant output %q", r.stdout)
		}
		rr := do(t, "GET", s.URL+"/v1/portfolio/cards/"+id, writeKey, nil)
		expect(t, rr, http.StatusOK, "")
		if got := owObject(t, rr.JSON(t), "card")["effective_access"]; got != "read" {
			t.Fatalf("effective_access %v after CLI grant read", got)
		}
		owCLIOK(t, nil, append([]string{"grant", "portfolio", id, "none", "--json"}, owner...)...)
		owExpectError(t, do(t, "GET", s.URL+"/v1/portfolio/cards/"+id, writeKey, nil), http.StatusNotFound, "NOT_FOUND", "")

		r = owCLI(t, nil, append([]string{"grant", "portfolio", "no-such-card", "read"}, owner...)...)
		if r.code != 1 || !strings.HasPrefix(r.stderr, "error: NOT_FOUND: ") || !strings.HasSuffix(r.stderr, "(HTTP 404)\n") {
			t.Fatalf("grant on an unknown card: exit %d stderr %q", r.code, r.stderr)
		}
		r = owCLI(t, nil, append([]string{"grant", "portfolio", id, "admin"}, owner...)...)
		if r.code != 2 || !strings.Contains(r.stderr, "LEVEL must be one of none, read, write") {
			t.Fatalf("bad level: exit %d stderr %q", r.code, r.stderr)
		}
	})

	t.Run("GrantSpace", func(t *testing.T) {
		r := owCLI(t, nil, append([]string{"grant", "space", "no-such-space", "read"}, owner...)...)
		if r.code != 1 || !strings.HasPrefix(r.stderr, "error: NOT_FOUND: ") {
			t.Fatalf("grant on an unknown Space: exit %d stderr %q", r.code, r.stderr)
		}
		spaceID := owFirstSpaceID(t, s, acct.OwnerSecret)
		r = owCLIOK(t, nil, append([]string{"grant", "space", spaceID, "write"}, owner...)...)
		if r.stdout != "Space "+spaceID+": grant write\n" {
			t.Fatalf("grant space output %q", r.stdout)
		}
		if ids := owStrings(t, owMe(t, s, writeKey), "accessible_space_ids"); !slices.Equal(ids, []string{spaceID}) {
			t.Fatalf("accessible_space_ids %v after CLI grant", ids)
		}
	})

	t.Run("PlanSet", func(t *testing.T) {
		r := owCLIOK(t, nil, append([]string{"plan", "set", "extended"}, owner...)...)
		if r.stdout != "plan: extended\n" {
			t.Fatalf("plan set output %q", r.stdout)
		}
		me := owMe(t, s, writeKey)
		if me["plan"] != "extended" || owNumber(t, owObject(t, me, "bookmark_spaces"), "limit") != 10 {
			t.Fatalf("/v1/me after CLI plan set extended: %v", me)
		}
		owCLIOK(t, nil, append([]string{"plan", "set", "base"}, owner...)...)
		if me := owMe(t, s, writeKey); me["plan"] != "base" {
			t.Fatalf("/v1/me after CLI plan set base: %v", me)
		}
		r = owCLI(t, nil, append([]string{"plan", "set", "gold"}, owner...)...)
		if r.code != 2 {
			t.Fatalf("plan set gold: exit %d stderr %q", r.code, r.stderr)
		}
	})

	t.Run("OwnerSecretRotateAndPasswordChange", func(t *testing.T) {
		a := s.createAccount(t, "base")
		_, key := owKey(t, s, a.OwnerSecret, "read", "revoked by rotation")
		r := owCLIOK(t, nil, "owner-secret", "rotate", "--current-password", a.Password, "--server", s.URL, "--owner-secret", a.OwnerSecret)
		rotated := owLines(t, r.stdout, "owner_secret")["owner_secret"]
		if !strings.Contains(r.stderr, "shown only once") || rotated == a.OwnerSecret {
			t.Fatalf("rotate: stdout %q stderr %q", r.stdout, r.stderr)
		}
		owExpectUnauthorized(t, do(t, "GET", s.URL+"/owner/v1/keys", a.OwnerSecret, nil))
		owExpectUnauthorized(t, do(t, "GET", s.URL+"/v1/me", key, nil))

		// A wrong current password fails with the server's 401 and exit 1.
		r = owCLI(t, nil, "password", "change", "--current-password", "not it", "--new-password", "cli password two", "--server", s.URL, "--owner-secret", rotated)
		if r.code != 1 || !strings.Contains(r.stderr, "401") {
			t.Fatalf("password change with a wrong password: exit %d stderr %q", r.code, r.stderr)
		}
		r = owCLIOK(t, nil, "--json", "password", "change", "--current-password", a.Password, "--new-password", "cli password two", "--server", s.URL, "--owner-secret", rotated)
		var changed map[string]any
		if err := json.Unmarshal([]byte(r.stdout), &changed); err != nil {
			t.Fatalf("password change --json output is not JSON: %v\n%s", err, r.stdout)
		}
		fresh := owString(t, changed, "owner_secret")
		owExpectUnauthorized(t, do(t, "GET", s.URL+"/owner/v1/keys", rotated, nil))
		expect(t, do(t, "GET", s.URL+"/owner/v1/keys", fresh, nil), http.StatusOK, "")
		expect(t, owSignIn(t, s, a.ID, "cli password two"), http.StatusCreated, "")
	})

	t.Run("ClusterStatusAndSnapshot", func(t *testing.T) {
		for _, extra := range [][]string{nil, {"--json"}} {
			r := owCLIOK(t, nil, append(append([]string{"cluster", "status"}, admin...), extra...)...)
			var st map[string]any
			if err := json.Unmarshal([]byte(r.stdout), &st); err != nil {
				t.Fatalf("cluster status %v output is not JSON: %v\n%s", extra, err, r.stdout)
			}
			owCheckOneNodeCluster(t, s, st)
			if extra == nil && !strings.Contains(r.stdout, "\n  \"") {
				t.Fatalf("cluster status is not indented:\n%s", r.stdout)
			}
		}
		r := owCLIOK(t, nil, append([]string{"snapshot"}, admin...)...)
		var snap map[string]any
		if err := json.Unmarshal([]byte(r.stdout), &snap); err != nil || snap["snapshot_taken"] != true {
			t.Fatalf("snapshot output %q (%v)", r.stdout, err)
		}
		if snaps, _ := filepath.Glob(filepath.Join(s.Dir, "snapshots", "*", "state.bin")); len(snaps) == 0 {
			t.Fatalf("CLI snapshot left no snapshot under %s", s.Dir)
		}
		r = owCLI(t, nil, "snapshot", "--admin", s.AdminURL, "--admin-token", acct.OwnerSecret)
		if r.code != 1 || r.stderr != "error: UNAUTHORIZED: missing or invalid credentials (HTTP 401)\n" {
			t.Fatalf("snapshot with an owner secret: exit %d stderr %q", r.code, r.stderr)
		}
		// --data finds a token file the way it would beside a server that
		// generated its own.
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "admin-token"), []byte(s.AdminToken+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		r = owCLIOK(t, nil, "cluster", "status", "--admin", s.AdminURL, "--data", dir, "--json")
		var st map[string]any
		if err := json.Unmarshal([]byte(r.stdout), &st); err != nil || st["leader"] != "node1" {
			t.Fatalf("cluster status with --data: %v\n%s", err, r.stdout)
		}
	})
}
