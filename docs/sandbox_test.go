package docs_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/addrwatch/addrwatch/internal/testaddr"
)

// The guides are written for a reader on a fresh clone who ran `make run`:
// one node on ./data, its public listener on 127.0.0.1:8080 and its admin
// listener on 127.0.0.1:8081, the demo account's credentials printed. The
// sandbox is that, in a temporary directory: bin/ holds addrwatchd and
// addrwatch, built once; the node runs with --demo on ./data, on free
// loopback ports, which the test writes into each block for 8080 and 8081.
type sandbox struct {
	dir     string
	env     []string
	replace []replacement
}

// A replacement turns a guide's placeholder into the sandbox's value.
type replacement struct {
	what *regexp.Regexp
	with string
	says string // for the log
}

// blockTimeout bounds one block; the blocks are single requests and CLI
// calls that answer in well under a second.
const blockTimeout = 30 * time.Second

// readyTimeout bounds the wait for the node's first start.
const readyTimeout = 60 * time.Second

func newSandbox(t *testing.T, root string) *sandbox {
	t.Helper()
	dir := t.TempDir()
	for _, cmd := range []string{"addrwatchd", "addrwatch"} {
		build := exec.Command("go", "build", "-o", filepath.Join(dir, "bin", cmd), "./cmd/"+cmd)
		build.Dir = root
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("go build ./cmd/%s: %v\n%s", cmd, err, out)
		}
	}
	writeCurl(t, dir)
	ports := freePorts(t, 3)
	public, admin := "127.0.0.1:"+ports[0], "127.0.0.1:"+ports[1]
	// `make run`'s command, on the sandbox's ports.
	startNode(t, dir, "addrwatchd --demo", admin, filepath.Join("data", "demo-credentials"),
		"--demo", "--data", "./data", "--http", public, "--admin", admin, "--raft", "127.0.0.1:"+ports[2])
	stoppedNode(t, dir)
	cred := readCredentials(t, filepath.Join(dir, "data", "demo-credentials"))
	f := makeFixtures(t, dir, "http://"+public, cred)

	sb := &sandbox{dir: dir}
	// The variables the guides set in one block and use in later ones
	// (KEY, A, J, O, ADDRWATCH_OWNER_SECRET), so that each block runs on
	// its own, and the CLI's own variables for the node's addresses.
	sb.env = append(cleanEnv(),
		"PATH="+filepath.Join(dir, "tools")+":"+filepath.Join(dir, "bin")+":"+os.Getenv("PATH"),
		"ADDRWATCH_SERVER=http://"+public,
		"ADDRWATCH_ADMIN_URL=http://"+admin,
		"ADDRWATCH_URL=http://"+public,
		"ADDRWATCH_API_KEY="+cred["write key"],
		"ADDRWATCH_OWNER_SECRET="+cred["owner secret"],
		"KEY="+cred["write key"],
		"A=Authorization: Bearer "+cred["write key"],
		"J=Content-Type: application/json",
		"O=Authorization: Bearer "+cred["owner secret"],
	)
	literal := func(s, with, says string) {
		sb.replace = append(sb.replace, replacement{regexp.MustCompile(regexp.QuoteMeta(s)), with, says})
	}
	word := func(s, with, says string) {
		sb.replace = append(sb.replace, replacement{regexp.MustCompile(`\b` + s + `\b`), with, says})
	}
	literal("127.0.0.1:8080", public, "the node's public listener")
	literal("127.0.0.1:8081", admin, "the node's admin listener")
	literal("awk.…", cred["write key"], "the demo write key")
	literal("aws.…", cred["owner secret"], "the demo owner secret")
	word("SHEET_SPACE_ID", f.sheet, "a Sheet Space the write key may write")
	word("SPACE_ID", f.space, "a bitcoin Space the write key may write")
	word("CARD_ID", f.card, "an Account card of the write key")
	word("TXID", f.txid, "a transaction of that card")
	word("KEY_ID", f.keyID, "the write key's ID")
	for _, r := range sb.replace {
		t.Logf("in every block, %s is %s (%s)", r.what, r.with, r.says)
	}
	return sb
}

// cleanEnv is the test's environment without addrwatch's own variables,
// which would change what a block's commands do.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "ADDRWATCH_") {
			env = append(env, kv)
		}
	}
	return env
}

// writeCurl puts a curl first on the blocks' PATH that fails on an HTTP
// error (--fail-with-body), as a reader would notice one, unless the
// block is marked "any status".
func writeCurl(t *testing.T, dir string) {
	t.Helper()
	real, err := exec.LookPath("curl")
	if err != nil {
		t.Fatalf("the guides' blocks call curl, which is not installed (make test-tools installs it): %v", err)
	}
	script := "#!/bin/sh\n" +
		"if [ -z \"$DOCS_TEST_ANY_STATUS\" ]; then set -- --fail-with-body \"$@\"; fi\n" +
		"exec " + real + " --max-time 20 \"$@\"\n"
	if err := os.MkdirAll(filepath.Join(dir, "tools"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tools", "curl"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
}

// freePorts returns n distinct loopback ports that were free a moment ago.
func freePorts(t *testing.T, n int) []string {
	t.Helper()
	var ports []string
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		_, port, _ := net.SplitHostPort(l.Addr().String())
		ports = append(ports, port)
	}
	return ports
}

// readCredentials reads the demo credentials file: "  name:  value" lines.
func readCredentials(t *testing.T, path string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cred := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		name, value, ok := strings.Cut(strings.TrimSpace(sc.Text()), ":")
		if fields := strings.Fields(value); ok && len(fields) > 0 {
			cred[name] = fields[0]
		}
	}
	for _, name := range []string{"owner secret", "write key"} {
		if !strings.HasPrefix(cred[name], "aw") {
			t.Fatalf("%s has no %s: %s", path, name, b)
		}
	}
	return cred
}

// fixtures are the resources the guides' placeholders stand for.
type fixtures struct {
	card, space, sheet, txid, keyID string
}

// makeFixtures gives the demo account what the guides assume a reader has
// made by then: the extended plan (room for two Spaces), an Account card
// with a transaction, a bitcoin Space and a Sheet Space the write key may
// write, and a BIP-329 file to import.
func makeFixtures(t *testing.T, dir, base string, cred map[string]string) fixtures {
	t.Helper()
	owner, key := cred["owner secret"], cred["write key"]
	var f fixtures
	call(t, base, "PUT", "/owner/v1/plan", owner, map[string]any{"plan": "extended"}, nil)
	var spaces struct {
		Spaces []struct {
			ID   string `json:"id"`
			Type string `json:"type"`
		} `json:"spaces"`
		Revision string `json:"bookmark_revision"`
	}
	call(t, base, "GET", "/owner/v1/bookmark-spaces", owner, nil, &spaces)
	for _, s := range spaces.Spaces {
		if s.Type == "bitcoin" {
			f.space = s.ID
		}
	}
	if f.space == "" {
		t.Fatalf("the demo account has no bitcoin Space: %+v", spaces)
	}
	var sheet struct {
		Space struct {
			ID string `json:"id"`
		} `json:"space"`
	}
	call(t, base, "POST", "/owner/v1/bookmark-spaces", owner, map[string]any{
		"expected_bookmark_revision": spaces.Revision, "name": "Rows", "type": "sheet"}, &sheet)
	f.sheet = sheet.Space.ID
	for _, id := range []string{f.space, f.sheet} {
		call(t, base, "PUT", "/owner/v1/grants/bookmark-spaces/"+id, owner, map[string]any{"level": "write"}, nil)
	}
	var card struct {
		Card struct {
			ID string `json:"id"`
		} `json:"card"`
	}
	call(t, base, "POST", "/v1/portfolio/cards", key, map[string]any{
		"address": testaddr.P2PKH("docs test card"), "name": "docs test"}, &card)
	f.card = card.Card.ID
	var txs struct {
		Transactions []struct {
			TxID string `json:"txid"`
		} `json:"transactions"`
	}
	call(t, base, "GET", "/v1/history/cards/"+f.card+"/transactions?limit=1", key, nil, &txs)
	if len(txs.Transactions) == 0 {
		t.Fatalf("the card %s has no transaction on the simulated chain", f.card)
	}
	f.txid = txs.Transactions[0].TxID
	// A key is awk.<account>.<key ID>.<secret>.
	if parts := strings.Split(key, "."); len(parts) == 4 {
		f.keyID = parts[2]
	} else {
		t.Fatalf("the write key %q is not awk.ACCOUNT.KEY_ID.SECRET", key)
	}
	labels := fmt.Sprintf(`{"type":"addr","ref":%q,"label":"cold storage"}`+"\n", testaddr.P2PKH("docs test label"))
	if err := os.WriteFile(filepath.Join(dir, "wallet-labels.jsonl"), []byte(labels), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// call makes one API request as the test's own setup and fails the test
// on anything but a 2xx; out, when not nil, receives the JSON answer.
func call(t *testing.T, base, method, path, bearer string, body, out any) {
	t.Helper()
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, base+path, r)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+bearer)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode/100 != 2 {
		t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, b)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s %s: %v in %s", method, path, err, b)
		}
	}
}

// run runs one block in the sandbox's directory with bash -e, so that
// every command of it must succeed, as a reader pasting it would expect.
func (sb *sandbox) run(t *testing.T, b block) {
	t.Helper()
	text := b.text
	for _, r := range sb.replace {
		text = r.what.ReplaceAllLiteralString(text, r.with)
	}
	ctx, cancel := context.WithTimeout(context.Background(), blockTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-e", "-o", "pipefail", "-c", text)
	cmd.Dir, cmd.Env = sb.dir, sb.env
	if b.mark.anyStatus {
		cmd.Env = append(cmd.Env, "DOCS_TEST_ANY_STATUS=1")
	}
	// The block's own children go with it when it times out.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		err = fmt.Errorf("did not finish in %v", blockTimeout)
	}
	if err != nil {
		t.Errorf("%s: %v\nthe block as run:\n%s\nits output:\n%s", b.where(), err, text, out)
		return
	}
	t.Logf("%s ran:\n%s%s", b.where(), text, shorten(out))
}

// shorten keeps the log of a passing block readable: a guide's answer can
// be a whole document.
func shorten(out []byte) []byte {
	const keep = 2000
	if len(out) <= keep {
		return out
	}
	return fmt.Appendf(out[:keep:keep], "… (%d bytes in all)\n", len(out))
}
