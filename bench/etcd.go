package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// compare-etcd answers "is a durable Sheet write slow?" against a known
// reference: a three-node etcd, which also replicates every put through
// raft and fsyncs its log before answering. Both sides get the same
// number of writes through the same fasthttp client at the same
// concurrency; etcd is stopped before addrwatch is driven, so they never
// share the cores.

// defaultEtcdRequests is the writes per side when --requests is unset.
const defaultEtcdRequests = 10000

// etcdStartTimeout bounds how long the three etcd members may take to
// elect a leader and answer /health.
const etcdStartTimeout = 30 * time.Second

func compareEtcd(ctx context.Context, cfg *config, stdout, stderr io.Writer) int {
	bin, err := exec.LookPath(cfg.etcdBin)
	if err != nil {
		fmt.Fprintf(stderr, "bench: compare-etcd needs etcd, and %q is not on PATH.\n", cfg.etcdBin)
		fmt.Fprintln(stderr, "Install Debian's package, then run this again:")
		fmt.Fprintln(stderr, "  apt-get install etcd-server")
		fmt.Fprintln(stderr, "or point --etcd at an etcd binary.")
		return exitUsage
	}
	c := newClient(cfg.connections, cfg.timeout)
	e := &env{cfg: cfg, client: c}
	sheetPut := findScenario("sheet-put")
	// Set up addrwatch first: if its server is missing, say so before
	// spending half a minute on etcd.
	prog := &progress{w: stderr, tty: isTerminal(stderr)}
	if err := setupFor([]*scenario{sheetPut}, e, prog, stderr); err != nil {
		fmt.Fprintln(stderr, "bench:", err)
		return exitFailed
	}

	var results []*result
	for round := 1; round <= cfg.rounds; round++ {
		if cfg.rounds > 1 {
			fmt.Fprintf(stderr, "round %d of %d\n", round, cfg.rounds)
		}
		etcdRes, err := runEtcdPut(ctx, cfg, bin, c, prog, stderr)
		if err != nil {
			fmt.Fprintln(stderr, "bench: etcd:", err)
			return exitFailed
		}
		results = append(results, etcdRes)
		if ctx.Err() != nil {
			return report(cfg, results, stdout, stderr)
		}
		awRes, err := runScenario(ctx, sheetPut, e, prog, stderr)
		if err != nil {
			fmt.Fprintln(stderr, "bench: sheet-put:", err)
			return exitFailed
		}
		results = append(results, awRes)
		if cfg.rounds > 1 {
			etcdRes.Scenario += fmt.Sprintf(" #%d", round)
			awRes.Scenario += fmt.Sprintf(" #%d", round)
		}
	}
	code := report(cfg, results, stdout, stderr)
	w := stderrOrStdout(cfg, stdout, stderr)
	if cfg.rounds == 1 {
		printRatio(w, results[0], results[1], len(cfg.targets))
	} else {
		printRounds(w, results, len(cfg.targets))
	}
	return code
}

// runEtcdPut starts a three-member etcd, drives its durable puts, and
// stops it before returning, so that addrwatch never shares the cores
// with it.
func runEtcdPut(ctx context.Context, cfg *config, bin string, c *client, prog *progress, stderr io.Writer) (*result, error) {
	cluster, err := startEtcd(ctx, bin, stderr)
	if err != nil {
		return nil, err
	}
	defer cluster.stop()
	workers := make([]worker, cfg.connections)
	for w := range workers {
		workers[w] = newEtcdPutWorker(cluster.clientURLs[w%len(cluster.clientURLs)], w)
	}
	fmt.Fprintf(stderr, "etcd-put: %d connections, %s requests over %d etcd members\n", cfg.connections, commas(cfg.requests), len(cluster.clientURLs))
	res := runLoad(ctx, loadSpec{name: "etcd-put", workers: workers, requests: cfg.requests, rate: cfg.rate, progress: prog,
		send: func(_ int, req *request, resp *response) { c.do(req, resp) }})
	res.Targets = len(cluster.clientURLs)
	return res, nil
}

func stderrOrStdout(cfg *config, stdout, stderr io.Writer) io.Writer {
	if cfg.jsonOut {
		return stderr
	}
	return stdout
}

// printRatio puts the two sides side by side.
func printRatio(w io.Writer, etcd, aw *result, targets int) {
	ratio := func(a, b float64) string {
		if b == 0 {
			return "-"
		}
		return fmt.Sprintf("%.2f×", a/b)
	}
	lat := func(d time.Duration) float64 { return float64(d) }
	fmt.Fprintln(w)
	fmt.Fprintf(w, "addrwatch (%d node(s)) ÷ etcd (3 members), same writes, client and connections:\n", targets)
	fmt.Fprintf(w, "  throughput  %s   (above 1× addrwatch is faster)\n", ratio(aw.Total.Throughput, etcd.Total.Throughput))
	fmt.Fprintf(w, "  p50         %s   (above 1× addrwatch is slower)\n", ratio(lat(aw.Total.Latency.P50), lat(etcd.Total.Latency.P50)))
	fmt.Fprintf(w, "  p99         %s\n", ratio(lat(aw.Total.Latency.P99), lat(etcd.Total.Latency.P99)))
	if targets < 3 {
		fmt.Fprintln(w, "  note: etcd replicates to three members; for a like-for-like figure run addrwatch as three nodes and list all three in --targets.")
	}
}

// printRounds lists each round's ratios and their medians: the machine's
// speed drifts between runs minutes apart, and each round compares two
// runs made back to back.
func printRounds(w io.Writer, results []*result, targets int) {
	var throughput, p99 []float64
	fmt.Fprintln(w)
	fmt.Fprintf(w, "addrwatch (%d node(s)) ÷ etcd (3 members), same writes, client and connections, round by round:\n", targets)
	for i := 0; i+1 < len(results); i += 2 {
		etcd, aw := results[i], results[i+1]
		t := safeRatio(aw.Total.Throughput, etcd.Total.Throughput)
		l := safeRatio(float64(aw.Total.Latency.P99), float64(etcd.Total.Latency.P99))
		throughput, p99 = append(throughput, t), append(p99, l)
		fmt.Fprintf(w, "  round %d: throughput %.2f×  p99 %.2f×\n", i/2+1, t, l)
	}
	fmt.Fprintf(w, "  median:  throughput %.2f×  p99 %.2f×   (throughput above 1×: addrwatch is faster; p99 above 1×: slower)\n", median(throughput), median(p99))
}

func safeRatio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// median of xs (the mean of the middle two for an even count).
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// etcdPutWorker sends POST /v3/kv/put through etcd's HTTP/JSON gateway.
// Keys cycle through a pool, like Sheet upserts, and the value is a
// Sheet row's cells, so both sides move the same bytes.
type etcdPutWorker struct {
	url    string
	prefix string
	n      int
	value  string
	body   []byte
	req    request
}

func newEtcdPutWorker(clientURL string, w int) worker {
	return &etcdPutWorker{url: clientURL + "/v3/kv/put", prefix: fmt.Sprintf("bench/%d/", w),
		value: base64.StdEncoding.EncodeToString(jsonStrings(rowCells("put", w)...))}
}

func (w *etcdPutWorker) next() *request {
	key := base64.StdEncoding.EncodeToString(fmt.Appendf(nil, "%s%d", w.prefix, w.n%sheetPutKeys))
	w.n++
	w.body = append(w.body[:0], `{"key":"`...)
	w.body = append(w.body, key...)
	w.body = append(w.body, `","value":"`...)
	w.body = append(w.body, w.value...)
	w.body = append(w.body, `"}`...)
	w.req = request{op: "POST /v3/kv/put (etcd)", method: "POST", url: w.url, body: w.body}
	return &w.req
}

func (w *etcdPutWorker) done(*request, *response) {}

// etcdCluster is three etcd processes on loopback.
type etcdCluster struct {
	dir        string
	procs      []*exec.Cmd
	exited     []chan struct{}
	clientURLs []string
}

func startEtcd(ctx context.Context, bin string, stderr io.Writer) (*etcdCluster, error) {
	dir, err := os.MkdirTemp("", "bench-etcd-")
	if err != nil {
		return nil, err
	}
	cl := &etcdCluster{dir: dir}
	ports, err := loopbackAddrs(6)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	names := []string{"e1", "e2", "e3"}
	token := "bench-" + randomHex(4) // one per cluster: members with different tokens refuse each other
	var initial []string
	for i, n := range names {
		initial = append(initial, n+"=http://"+ports[3+i])
		cl.clientURLs = append(cl.clientURLs, "http://"+ports[i])
	}
	fmt.Fprintf(stderr, "etcd: starting 3 members (%s) in %s\n", strings.Join(cl.clientURLs, ", "), dir)
	for i, n := range names {
		logFile, err := os.Create(filepath.Join(dir, n+".log"))
		if err != nil {
			cl.stop()
			return nil, err
		}
		cmd := exec.Command(bin,
			"--name", n,
			"--data-dir", filepath.Join(dir, n),
			"--listen-client-urls", cl.clientURLs[i],
			"--advertise-client-urls", cl.clientURLs[i],
			"--listen-peer-urls", "http://"+ports[3+i],
			"--initial-advertise-peer-urls", "http://"+ports[3+i],
			"--initial-cluster", strings.Join(initial, ","),
			"--initial-cluster-state", "new",
			"--initial-cluster-token", token,
		)
		cmd.Stdout, cmd.Stderr = logFile, logFile
		if err := cmd.Start(); err != nil {
			logFile.Close()
			cl.stop()
			return nil, err
		}
		exited := make(chan struct{})
		go func() { cmd.Wait(); logFile.Close(); close(exited) }()
		cl.procs = append(cl.procs, cmd)
		cl.exited = append(cl.exited, exited)
	}
	if err := cl.waitHealthy(ctx); err != nil {
		logs := cl.logTail()
		cl.stop()
		return nil, fmt.Errorf("%w\n%s", err, logs)
	}
	return cl, nil
}

// waitHealthy polls every member's /health until each says true.
func (cl *etcdCluster) waitHealthy(ctx context.Context) error {
	c := newClient(len(cl.clientURLs), 2*time.Second)
	deadline := time.Now().Add(etcdStartTimeout)
	for {
		healthy := 0
		for i, u := range cl.clientURLs {
			select {
			case <-cl.exited[i]:
				return fmt.Errorf("member %d exited during start", i+1)
			default:
			}
			var h struct {
				Health string `json:"health"`
			}
			if c.call("GET", u+"/health", "", nil, 200, &h) == nil && h.Health == "true" {
				healthy++
			}
		}
		if healthy == len(cl.clientURLs) {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return errors.New("the members did not all report healthy within " + etcdStartTimeout.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func (cl *etcdCluster) logTail() string {
	var b bytes.Buffer
	for i := range cl.procs {
		data, _ := os.ReadFile(filepath.Join(cl.dir, fmt.Sprintf("e%d.log", i+1)))
		lines := strings.Split(strings.TrimSpace(string(data)), "\n")
		fmt.Fprintf(&b, "--- e%d.log (last lines)\n%s\n", i+1, strings.Join(lines[max(0, len(lines)-5):], "\n"))
	}
	return b.String()
}

// stop ends the members (SIGTERM, then SIGKILL after five seconds) and
// removes their data.
func (cl *etcdCluster) stop() {
	for _, p := range cl.procs {
		p.Process.Signal(os.Interrupt)
	}
	for i, p := range cl.procs {
		select {
		case <-cl.exited[i]:
		case <-time.After(5 * time.Second):
			p.Process.Kill()
			<-cl.exited[i]
		}
	}
	os.RemoveAll(cl.dir)
}

// loopbackAddrs returns n distinct free loopback addresses.
func loopbackAddrs(n int) ([]string, error) {
	var out []string
	for range n {
		ln, err := net.Listen("tcp4", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		defer ln.Close()
		out = append(out, ln.Addr().String())
	}
	return out, nil
}
