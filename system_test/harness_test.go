// Package system_test drives real addrwatchd processes over loopback HTTP:
// the whole path of a request (fasthttp, auth, raft with an fsync'd log,
// the FSM, the account actors) with nothing faked. The fault test alone
// runs a build of addrwatchd with -tags faultinject, so that it can put a
// proxy of its own under every connection between two nodes
// (fault_build_test.go, fault_proxy_test.go).
package system_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/addrwatch/addrwatch/internal/regtest"
)

// serverBinary is built once by TestMain.
var serverBinary string

func TestMain(m *testing.M) {
	regtest.Supervise() // the copy of this binary that runs each test's btcd (regtest.Own)
	dir, err := os.MkdirTemp("", "addrwatchd-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	serverBinary = filepath.Join(dir, "addrwatchd")
	build := exec.Command("go", "build", "-o", serverBinary, "github.com/addrwatch/addrwatch/cmd/addrwatchd")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build addrwatchd:", err)
		os.Exit(1)
	}
	code := regtest.Run(m)
	stopSharedBrowser()
	os.RemoveAll(dir)
	os.Exit(code)
}

// builtOnce is a binary that go build makes once for every test that
// needs it, next to TestMain's binary (removed with it), so tests that run
// side by side share one build.
type builtOnce struct {
	once sync.Once
	path string
	err  error
	out  []byte
}

// get builds name from go build's args (the package last) the first time
// it is asked, and fails t when that build failed.
func (b *builtOnce) get(t testing.TB, name string, args ...string) string {
	t.Helper()
	b.once.Do(func() {
		b.path = filepath.Join(filepath.Dir(serverBinary), name)
		b.out, b.err = exec.Command("go", append([]string{"build", "-o", b.path}, args...)...).CombinedOutput()
	})
	if b.err != nil {
		t.Fatalf("go build %s: %v\n%s", strings.Join(args, " "), b.err, b.out)
	}
	return b.path
}

// server is one addrwatchd process.
type server struct {
	t          testing.TB
	Dir        string
	URL        string // public listener, e.g. http://127.0.0.1:41234
	AdminURL   string
	AdminToken string
	httpAddr   string
	adminAddr  string
	raftAddr   string
	cmd        *exec.Cmd
	logs       *syncBuffer // the process's stdout and stderr
	extra      []string    // arguments a restart repeats (cluster tests)
	certs      string      // the directory of its cluster's CA (cluster tests)
	binary     string      // the addrwatchd to run; "" is serverBinary
	env        []string    // added to the test's environment ("NAME=value")
	exited     chan struct{}
}

// startServer starts addrwatchd on a fresh data dir and free loopback
// ports, waits until it serves, and stops it when the test ends.
func startServer(t testing.TB, extraArgs ...string) *server {
	t.Helper()
	s := &server{t: t, Dir: t.TempDir(), AdminToken: "test-admin-token-" + fmt.Sprint(time.Now().UnixNano())}
	s.httpAddr, s.adminAddr, s.raftAddr = freeAddr(t), freeAddr(t), freeAddr(t)
	s.URL, s.AdminURL = "http://"+s.httpAddr, "http://"+s.adminAddr
	s.start(extraArgs...)
	t.Cleanup(s.stop)
	return s
}

// start (re)starts the process on the server's data dir and ports and
// waits until it serves.
func (s *server) start(extraArgs ...string) {
	s.t.Helper()
	s.launch(extraArgs...)
	s.waitReady()
}

// launch starts the process without waiting for it to serve (a cluster's
// nodes serve only once enough of them run).
func (s *server) launch(extraArgs ...string) {
	s.t.Helper()
	args := append([]string{"--http", s.httpAddr, "--admin", s.adminAddr, "--raft", s.raftAddr, "--data", s.Dir, "--admin-token", s.AdminToken, "--limits", "off"}, extraArgs...)
	adminBases.Store(s.AdminURL, true)
	s.logs = &syncBuffer{}
	binary := s.binary
	if binary == "" {
		binary = serverBinary
	}
	s.cmd = exec.Command(binary, args...)
	if s.env != nil {
		s.cmd.Env = append(os.Environ(), s.env...)
	}
	s.cmd.Stdout, s.cmd.Stderr = s.logs, s.logs
	if err := s.cmd.Start(); err != nil {
		s.t.Fatalf("start addrwatchd: %v", err)
	}
	s.exited = make(chan struct{})
	go func(cmd *exec.Cmd, exited chan struct{}) {
		cmd.Wait()
		close(exited)
	}(s.cmd, s.exited)
}

// waitReady polls /readyz until the node has a leader.
func (s *server) waitReady() {
	s.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-s.exited:
			s.t.Fatalf("addrwatchd exited during start:\n%s", s.logs.String())
		default:
		}
		resp, err := http.Get(s.AdminURL + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		time.Sleep(25 * time.Millisecond)
	}
	s.t.Fatalf("addrwatchd not ready after 20s:\n%s", s.logs.String())
}

// stop ends the process gracefully (SIGTERM) and waits for it.
func (s *server) stop() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	select {
	case <-s.exited:
		return
	default:
	}
	s.cmd.Process.Signal(os.Interrupt)
	select {
	case <-s.exited:
	case <-time.After(10 * time.Second):
		s.cmd.Process.Kill()
		<-s.exited
	}
}

// syncBuffer collects a process's output while tests read it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Bytes returns a copy of the output so far.
func (b *syncBuffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return bytes.Clone(b.buf.Bytes())
}

// kill ends the process with SIGKILL: no shutdown code runs.
func (s *server) kill() {
	s.cmd.Process.Kill()
	<-s.exited
}

// freeAddr returns a loopback address with a port no other caller in this
// process has been given. Ports come from below Linux's ephemeral range
// (32768 and up), so an outgoing connection cannot take one between the
// check here and the server's bind, and each is handed out once, so two
// servers started side by side never share one.
func freeAddr(t testing.TB) string {
	t.Helper()
	ports.Lock()
	defer ports.Unlock()
	if ports.used == nil {
		ports.used = map[int]bool{}
		ports.next = portsLow + os.Getpid()*7919%(portsHigh-portsLow)
	}
	for range portsHigh - portsLow {
		p := ports.next
		if ports.next++; ports.next >= portsHigh {
			ports.next = portsLow
		}
		if ports.used[p] {
			continue
		}
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
		if err != nil {
			continue
		}
		ln.Close()
		ports.used[p] = true
		return ln.Addr().String()
	}
	t.Fatal("no free loopback port")
	return ""
}

const portsLow, portsHigh = 20000, 32000

var ports struct {
	sync.Mutex
	next int
	used map[int]bool
}

// response is a decoded HTTP answer.
type response struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body into a generic map.
func (r response) JSON(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		t.Fatalf("body is not a JSON object: %v\n%s", err, r.Body)
	}
	return m
}

// Code returns the error code of an error body.
func (r response) Code(t testing.TB) string {
	t.Helper()
	code, _ := r.JSON(t)["code"].(string)
	return code
}

var httpClient = &http.Client{
	Timeout:       20 * time.Second,
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

// do sends one request. body may be nil, a string/[]byte (sent as is) or
// any other value (sent as JSON). headers are name/value pairs.
func do(t testing.TB, method, url, bearer string, body any, headers ...string) response {
	t.Helper()
	var rd io.Reader
	isJSON := false
	switch b := body.(type) {
	case nil:
	case string:
		rd, isJSON = strings.NewReader(b), true
	case []byte:
		rd, isJSON = bytes.NewReader(b), true
	default:
		enc, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		rd, isJSON = bytes.NewReader(enc), true
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if isJSON {
		req.Header.Set("Content-Type", "application/json")
	}
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	checkContract(t, method, url, resp.StatusCode, resp.Header, b)
	return response{Status: resp.StatusCode, Header: resp.Header, Body: b}
}

// account is a created account with its credentials.
type account struct {
	ID          string
	OwnerSecret string
	Password    string
}

// createAccount creates an account through the admin API.
func (s *server) createAccount(t testing.TB, plan string) account {
	t.Helper()
	password := "correct horse battery"
	// A cluster just started may still be settling its leaders (a sharded
	// one spreads them over the nodes): the operator is told to retry, and
	// does, as a script would. An extra account from a retried write whose
	// outcome was unknown harms no test.
	r := retry503(t, func() response {
		return do(t, "POST", s.AdminURL+"/admin/v1/accounts", s.AdminToken, map[string]any{"plan": plan, "password": password})
	})
	if r.Status != http.StatusCreated {
		t.Fatalf("create account: %d %s", r.Status, r.Body)
	}
	m := r.JSON(t)
	return account{ID: m["account_id"].(string), OwnerSecret: m["owner_secret"].(string), Password: password}
}

// createKey creates an API key through the owner API and returns it.
func (s *server) createKey(t testing.TB, a account, capability string) string {
	t.Helper()
	// As createAccount: a settling cluster's 503 is asked again.
	r := retry503(t, func() response {
		return do(t, "POST", s.URL+"/owner/v1/keys", a.OwnerSecret, map[string]any{"capability": capability, "name": capability + " key"})
	})
	if r.Status != http.StatusCreated {
		t.Fatalf("create key: %d %s", r.Status, r.Body)
	}
	return r.JSON(t)["key"].(string)
}

// expect fails the test unless r has the status (and, for errors, the code).
func expect(t testing.TB, r response, status int, code string) {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status %d, want %d; body %s", r.Status, status, r.Body)
	}
	if code != "" {
		if got := r.Code(t); got != code {
			t.Fatalf("code %q, want %q; body %s", got, code, r.Body)
		}
		if msg, _ := r.JSON(t)["error"].(string); msg == "" {
			t.Fatalf("error body without a message: %s", r.Body)
		}
	}
}
