package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
)

// runScenarios sets up the accounts the chosen scenarios need, runs each
// scenario in turn and reports.
func runScenarios(ctx context.Context, cfg *config, stdout, stderr io.Writer) int {
	c := newClient(cfg.connections, cfg.timeout)
	e := &env{cfg: cfg, client: c}
	chosen := make([]*scenario, len(cfg.scenarios))
	for i, name := range cfg.scenarios {
		chosen[i] = findScenario(name)
	}
	prog := &progress{w: stderr, tty: isTerminal(stderr)}
	if err := setupFor(chosen, e, prog, stderr); err != nil {
		fmt.Fprintln(stderr, "bench:", err)
		return exitFailed
	}

	var results []*result
	for _, s := range chosen {
		r, err := runScenario(ctx, s, e, prog, stderr)
		if err != nil {
			fmt.Fprintf(stderr, "bench: %s: %v\n", s.name, err)
			return exitFailed
		}
		results = append(results, r)
		if ctx.Err() != nil {
			fmt.Fprintln(stderr, "interrupted: reporting what ran")
			break
		}
	}
	return report(cfg, results, stdout, stderr)
}

// setupFor checks the server and creates the accounts, keys, Sheets and
// cards that the chosen scenarios need; baseline alone needs none.
func setupFor(chosen []*scenario, e *env, prog *progress, stderr io.Writer) error {
	cfg := e.cfg
	server, fixture, cards := false, false, false
	for _, s := range chosen {
		server = server || s.server
		fixture = fixture || s.server && !s.ownAccounts
		cards = cards || s.cards
	}
	if !server {
		return nil
	}
	perAccount := (cfg.connections + cfg.accounts - 1) / cfg.accounts
	if fixture && perAccount > sheetsPerAccountMax {
		return fmt.Errorf("%d connections over %d accounts is %d Sheets an account, and an extended account holds %d: use --accounts %d or more",
			cfg.connections, cfg.accounts, perAccount, sheetsPerAccountMax, (cfg.connections+sheetsPerAccountMax-1)/sheetsPerAccountMax)
	}
	for _, s := range chosen {
		if s.perAccountMax > 0 && perAccount > s.perAccountMax {
			return fmt.Errorf("%s: %d connections share an account, and at most %d may (each adds cards to a Space of ten): use --accounts %d or more",
				s.name, perAccount, s.perAccountMax, (cfg.connections+s.perAccountMax-1)/s.perAccountMax)
		}
	}
	if err := waitReady(e.client, cfg, stderr); err != nil {
		return err
	}
	if err := loadAdminToken(cfg); err != nil {
		return err
	}
	if !fixture {
		return nil
	}
	fix, err := setupFixture(e.client, cfg, perAccount, cards, prog, stderr)
	if err != nil {
		return fmt.Errorf("setup: %w", err)
	}
	e.fix = fix
	return nil
}

// runScenario prepares the workers (untimed), runs the load and returns
// its result.
func runScenario(ctx context.Context, s *scenario, e *env, prog *progress, stderr io.Writer) (*result, error) {
	cfg := e.cfg
	if s.start != nil {
		stop, err := s.start(e)
		if err != nil {
			return nil, err
		}
		defer stop()
	}
	if s.server && s.seedRows >= 0 {
		if err := forEachWorker(cfg.connections, func(w int) error {
			for _, o := range e.sheetsOf(w) {
				if err := resetSheet(o.acct.writer, o.sheet, s.seedRows); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			return nil, err
		}
	}
	workers := make([]worker, cfg.connections)
	for w := range workers {
		workers[w] = s.newWorker(e, w)
	}
	length := cfg.duration.String()
	if cfg.requests > 0 {
		length = commas(cfg.requests) + " requests"
	}
	mode := "closed loop"
	if cfg.rate > 0 {
		mode = "open loop at " + trimFloat(cfg.rate) + " req/s"
	}
	fmt.Fprintf(stderr, "%s: %d connections, %s, %s\n", s.name, cfg.connections, mode, length)
	res := runLoad(ctx, loadSpec{
		name: s.name, workers: workers, duration: cfg.duration, requests: cfg.requests, rate: cfg.rate, progress: prog,
		send: func(_ int, req *request, resp *response) { e.client.do(req, resp) },
	})
	if s.server {
		res.Targets = len(cfg.targets)
	}
	return res, nil
}

// forEachWorker runs f for every worker index at once and returns the
// first error.
func forEachWorker(n int, f func(w int) error) error {
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	for w := range n {
		wg.Go(func() {
			if err := f(w); err != nil {
				mu.Lock()
				if first == nil {
					first = err
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return first
}

// report prints the table (stdout, or stderr under --json), the details,
// the JSON and the plot. A scenario in which no request succeeded fails
// the run: its numbers describe an error path, not the API.
func report(cfg *config, results []*result, stdout, stderr io.Writer) int {
	table := stdout
	if cfg.jsonOut {
		table = stderr
	}
	fmt.Fprintln(table)
	printTable(table, results)
	fmt.Fprintln(table)
	printDetails(table, results)
	code := 0
	if cfg.jsonOut {
		if err := writeJSONReport(stdout, cfg, results); err != nil {
			fmt.Fprintln(stderr, "bench: --json:", err)
			code = exitFailed
		}
	}
	if cfg.plot != "" {
		if err := writePlotFile(cfg.plot, results); err != nil {
			fmt.Fprintln(stderr, "bench: --plot:", err)
			code = exitFailed
		} else {
			fmt.Fprintln(stderr, "plot written to", cfg.plot)
		}
	}
	for _, r := range results {
		if r.Total.Requests > 0 && r.Total.Errors == r.Total.Requests {
			fmt.Fprintf(stderr, "bench: every request of %s failed\n", r.Scenario)
			code = exitFailed
		}
	}
	return code
}

func isTerminal(w io.Writer) bool {
	f, isFile := w.(*os.File)
	if !isFile {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// freePortsCommand prints N free loopback addresses, for scripts that
// start a server on ports nothing else uses (make bench).
func freePortsCommand(cfg *config, stdout, stderr io.Writer) int {
	addrs, err := loopbackAddrs(cfg.freePorts)
	if err != nil {
		fmt.Fprintln(stderr, "bench: free-ports:", err)
		return exitFailed
	}
	fmt.Fprintln(stdout, strings.Join(addrs, " "))
	return 0
}
