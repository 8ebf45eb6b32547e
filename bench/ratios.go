package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"

	"github.com/valyala/fasthttp"
)

// read-ratios answers "how close is an agent read to what fasthttp alone
// can do on this machine?": it drives one read endpoint at a time against
// --targets and, right before, the same requests against a bare fasthttp
// server in a process of its own (this binary's bare-server command),
// which answers every request {"ok":true} without reading it. Both see
// the same client, connections, duration and cores, so their ratio of
// successful requests per second cancels most of the machine's drift;
// --rounds repeats the pairs, and the median ratio is the figure (issue
// 30's table: GET /v1/me and a ten-card GET /v1/portfolio/cards).

// readRatioEndpoints are the reads read-ratios measures, in order.
var readRatioEndpoints = []struct{ name, path string }{
	{"GET /v1/me", "/v1/me"},
	{"GET /v1/portfolio/cards (10 cards)", "/v1/portfolio/cards"},
}

// bareBody is the bare server's whole answer.
var bareBody = []byte(`{"ok":true}`)

func readRatios(ctx context.Context, cfg *config, stdout, stderr io.Writer) int {
	c := newClient(cfg.connections, cfg.timeout)
	e := &env{cfg: cfg, client: c}
	prog := &progress{w: stderr, tty: isTerminal(stderr)}
	if err := setupFor([]*scenario{findScenario("auth-reads")}, e, prog, stderr); err != nil {
		fmt.Fprintln(stderr, "bench:", err)
		return exitFailed
	}
	unfill, err := fillPortfolios(e)
	if err != nil {
		fmt.Fprintln(stderr, "bench: setup:", err)
		return exitFailed
	}
	defer unfill()
	bare, barePID, stopBare, err := startBareServer(ctx)
	if err != nil {
		fmt.Fprintln(stderr, "bench: bare server:", err)
		return exitFailed
	}
	defer stopBare()

	bareCPU := func() (float64, bool) { return processCPU(barePID) }
	oursCPU := func() (float64, bool) { return nodeCPU(e) }

	var results []*result
	ratios := make([][]float64, len(readRatioEndpoints))
	cpu := make([][]cpuPair, len(readRatioEndpoints))
	for round := 1; round <= cfg.rounds && ctx.Err() == nil; round++ {
		for i, ep := range readRatioEndpoints {
			base, baseCPU := measured(bareCPU, func() *result {
				return run1(ctx, e, prog, stderr, fmt.Sprintf("bare %s #%d", ep.name, round), func(int) string { return bare + ep.path })
			})
			ours, ourCPU := measured(oursCPU, func() *result {
				return run1(ctx, e, prog, stderr, fmt.Sprintf("%s #%d", ep.name, round), func(w int) string { return e.target(w) + ep.path })
			})
			if ctx.Err() != nil {
				break
			}
			results = append(results, base, ours)
			ratios[i] = append(ratios[i], safeRatio(successRate(ours), successRate(base)))
			cpu[i] = append(cpu[i], cpuPair{bare: baseCPU, ours: ourCPU})
		}
	}
	code := report(cfg, results, stdout, stderr)
	printReadRatios(stderrOrStdout(cfg, stdout, stderr), results, ratios, cpu)
	return code
}

// cpuPair is one round's CPU µs per successful request of the bare server
// and of addrwatch (0: not read).
type cpuPair struct{ bare, ours float64 }

// run1 sends GETs for --duration, worker w to the URL urlOf gives it,
// each worker with its own account's read-only key.
func run1(ctx context.Context, e *env, prog *progress, stderr io.Writer, name string, urlOf func(w int) string) *result {
	workers := make([]worker, e.cfg.connections)
	for w := range workers {
		workers[w] = &fixedWorker{req: request{op: name, method: fasthttp.MethodGet, url: urlOf(w), bearer: e.account(w).readKey}}
	}
	fmt.Fprintf(stderr, "%s: %d connections, closed loop, %s\n", name, e.cfg.connections, e.cfg.duration)
	return runLoad(ctx, loadSpec{name: name, workers: workers, duration: e.cfg.duration, progress: prog,
		send: func(_ int, req *request, resp *response) { e.client.do(req, resp) }})
}

// fixedWorker sends the same request again and again (baseline,
// read-ratios).
type fixedWorker struct{ req request }

func (w *fixedWorker) next() *request           { return &w.req }
func (w *fixedWorker) done(*request, *response) {}

// successRate is a run's successful (2xx) requests per second.
func successRate(r *result) float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Total.Requests-r.Total.Errors) / r.Elapsed.Seconds()
}

// printReadRatios lists each round's ratio of each endpoint and the
// median: successful requests per second of addrwatch ÷ the bare server's.
func printReadRatios(w io.Writer, results []*result, ratios [][]float64, cpu [][]cpuPair) {
	fmt.Fprintln(w)
	fmt.Fprintln(w, "addrwatch ÷ a bare fasthttp server (its own process, answering {\"ok\":true}), successful requests/s, run back to back:")
	for i, ep := range readRatioEndpoints {
		if len(ratios[i]) == 0 {
			continue
		}
		var rounds []string
		for r, x := range ratios[i] {
			base, ours := results[2*(r*len(readRatioEndpoints)+i)], results[2*(r*len(readRatioEndpoints)+i)+1]
			rounds = append(rounds, fmt.Sprintf("%.2f× (%s ÷ %s)", x, commas(int64(successRate(ours))), commas(int64(successRate(base)))))
		}
		fmt.Fprintf(w, "  %-36s median %.2f×   rounds: %s\n", ep.name, median(ratios[i]), strings.Join(rounds, ", "))
	}
	fmt.Fprintln(w, "the same as CPU per successful request, bare server's ÷ addrwatch's (addrwatch: the node at --admin):")
	for i, ep := range readRatioEndpoints {
		var rounds []string
		var shares, bares, ours []float64
		for _, p := range cpu[i] {
			rounds = append(rounds, formatCPU(p.bare, p.ours))
			if p.bare > 0 && p.ours > 0 {
				shares, bares, ours = append(shares, p.bare/p.ours), append(bares, p.bare), append(ours, p.ours)
			}
		}
		if len(shares) == 0 {
			fmt.Fprintf(w, "  %-36s not read (no /proc, or no /metrics with the admin token)\n", ep.name)
			continue
		}
		fmt.Fprintf(w, "  %-36s median %.2f× (%.1f ÷ %.1f µs)   rounds: %s\n", ep.name, median(shares), median(bares), median(ours), strings.Join(rounds, ", "))
	}
}

// startBareServer starts this binary's bare-server command and returns
// its base URL, its process ID and a func that stops it.
func startBareServer(ctx context.Context) (string, int, func(), error) {
	self, err := os.Executable()
	if err != nil {
		return "", 0, nil, err
	}
	cmd := exec.CommandContext(ctx, self, "bare-server")
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return "", 0, nil, err
	}
	if err := cmd.Start(); err != nil {
		return "", 0, nil, err
	}
	stop := func() { cmd.Process.Kill(); cmd.Wait() }
	addr, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		stop()
		return "", 0, nil, fmt.Errorf("it said no address: %w", err)
	}
	return "http://" + strings.TrimSpace(addr), cmd.Process.Pid, stop, nil
}

// bareServerCommand serves bareBody to every request on a free loopback
// port, which it prints first, until it is interrupted or the process
// that started it kills it.
func bareServerCommand(ctx context.Context, stdout, stderr io.Writer) int {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(stderr, "bench: bare-server:", err)
		return exitFailed
	}
	srv := &fasthttp.Server{
		NoDefaultServerHeader: true,
		Handler: func(ctx *fasthttp.RequestCtx) {
			ctx.SetContentType("application/json")
			ctx.SetBody(bareBody)
		},
	}
	fmt.Fprintln(stdout, ln.Addr().String())
	go func() {
		<-ctx.Done()
		srv.ShutdownWithContext(context.Background())
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, net.ErrClosed) {
		fmt.Fprintln(stderr, "bench: bare-server:", err)
		return exitFailed
	}
	return 0
}
