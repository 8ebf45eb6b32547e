// Command bench load-tests addrwatch over real HTTP: it creates its own
// accounts, keys and Sheet Spaces through the admin and owner APIs, drives
// one or more scenarios with fasthttp's client, and reports latency
// percentiles from an HDR histogram, throughput and errors by status and
// code. `bench compare-etcd` puts the same number of durable writes through
// a three-node etcd for comparison, and `bench watch` times the chain
// follower against a btcd regtest node of its own, followed directly or
// through an Electrum or Esplora test server. README.md beside this
// file explains every scenario and every column.
//
//	go run ./bench --targets http://127.0.0.1:8080 --duration 10s sheet-put reads
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/addrwatch/addrwatch/internal/regtest"
)

// Exit codes: 1 when a run could not be carried out (no server, setup
// refused), 2 for a usage error or a missing etcd binary.
const (
	exitFailed = 1
	exitUsage  = 2
)

// config is everything the flags and arguments say.
type config struct {
	command     string // "run", "compare-etcd", "read-ratios", "watch", "notify", "bare-server", "fsync" or "free-ports"
	scenarios   []string
	targets     []string // public listeners, without a trailing slash
	admin       string
	adminToken  string
	data        string
	accounts    int // 0: one per connection
	connections int
	duration    time.Duration
	requests    int64   // 0: run for duration
	rate        float64 // requests/s over all connections; 0: closed loop
	timeout     time.Duration
	wait        time.Duration
	jsonOut     bool
	plot        string
	etcdBin     string
	rounds      int // compare-etcd, read-ratios: rounds of the reference then addrwatch
	freePorts   int
	watch       watchConfig  // the watch command's own flags, which notify reads too
	notify      notifyConfig // the notify command's own flags
}

func main() {
	// bench watch starts a btcd regtest node, whose harness runs this
	// program again as btcd's supervisor: that copy stops here.
	regtest.Program()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
}

func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	cfg, err := parseArgs(args, getenv)
	switch {
	case errors.Is(err, flag.ErrHelp):
		printUsage(stdout)
		return 0
	case err != nil:
		fmt.Fprintln(stderr, "bench:", err)
		fmt.Fprintln(stderr, "run `go run ./bench --help` for the flags and scenarios")
		return exitUsage
	}
	switch cfg.command {
	case "free-ports":
		return freePortsCommand(cfg, stdout, stderr)
	case "fsync":
		return fsyncCommand(cfg, stdout, stderr)
	case "compare-etcd":
		return compareEtcd(ctx, cfg, stdout, stderr)
	case "read-ratios":
		return readRatios(ctx, cfg, stdout, stderr)
	case "watch":
		return watchCommand(ctx, cfg, stdout, stderr)
	case "notify":
		return notifyCommand(ctx, cfg, stdout, stderr)
	case "bare-server":
		return bareServerCommand(ctx, stdout, stderr)
	default:
		return runScenarios(ctx, cfg, stdout, stderr)
	}
}

// parseArgs reads flags and positional arguments in any order, so both
// `bench --duration 5s reads` and `bench reads --duration 5s` work (Go's
// flag package alone stops at the first positional argument).
func parseArgs(args []string, getenv func(string) string) (*config, error) {
	cfg := &config{command: "run"}
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are reported once, by run
	targets := fs.String("targets", "http://127.0.0.1:8080", "comma-separated public URLs of the nodes to load (agent and owner APIs)")
	fs.StringVar(&cfg.admin, "admin", "http://127.0.0.1:8081", "admin URL of one node (creates accounts; /readyz)")
	fs.StringVar(&cfg.adminToken, "admin-token", getenv("ADDRWATCH_ADMIN_TOKEN"), "admin bearer token; default $ADDRWATCH_ADMIN_TOKEN, else <data>/admin-token")
	fs.StringVar(&cfg.data, "data", "./data", "the server's data dir, read for admin-token when --admin-token is unset")
	fs.IntVar(&cfg.accounts, "accounts", 0, "accounts to create and spread the load over; 0 means one per connection")
	fs.IntVar(&cfg.connections, "connections", 32, "concurrent connections (workers), each with one request in flight")
	fs.IntVar(&cfg.connections, "c", 32, "shorthand for --connections")
	fs.DurationVar(&cfg.duration, "duration", 10*time.Second, "how long each scenario runs (ignored with --requests)")
	fs.Int64Var(&cfg.requests, "requests", 0, "requests per scenario instead of a duration (compare-etcd: default 10000)")
	fs.Float64Var(&cfg.rate, "rate", 0, "open loop: send this many requests/s in total, timing each from its intended send time; 0 is closed loop")
	fs.DurationVar(&cfg.timeout, "timeout", 10*time.Second, "per-request timeout")
	fs.DurationVar(&cfg.wait, "wait", 15*time.Second, "how long to wait for the admin /readyz before giving up")
	fs.BoolVar(&cfg.jsonOut, "json", false, "print machine-readable results to stdout (the table goes to stderr)")
	fs.StringVar(&cfg.plot, "plot", "", "write an SVG of throughput and p99 latency per second to this file")
	fs.StringVar(&cfg.etcdBin, "etcd", "etcd", "compare-etcd: the etcd binary")
	fs.IntVar(&cfg.rounds, "rounds", 1, "compare-etcd and read-ratios: run the reference then addrwatch this many times in turn and report every round's ratio and their median")
	addWatchFlags(fs, &cfg.watch)
	addNotifyFlags(fs, &cfg.notify)

	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			break
		}
		positional = append(positional, fs.Arg(0))
		args = fs.Args()[1:]
	}

	if len(positional) > 0 {
		switch positional[0] {
		case "compare-etcd", "read-ratios", "watch", "notify":
			cfg.command, positional = positional[0], positional[1:]
			if len(positional) > 0 {
				return nil, fmt.Errorf("%s takes no scenarios, got %q", cfg.command, positional)
			}
		case "bare-server":
			if len(positional) > 1 {
				return nil, fmt.Errorf("bare-server takes no arguments, got %q", positional[1:])
			}
			cfg.command = positional[0]
			return cfg, nil
		case "fsync":
			if len(positional) > 1 {
				return nil, fmt.Errorf("fsync takes no scenarios, got %q", positional[1:])
			}
			cfg.command = positional[0]
			if cfg.requests == 0 {
				cfg.requests = defaultFsyncRequests
			}
			return cfg, nil
		case "free-ports":
			cfg.command = positional[0]
			n := 1
			if len(positional) == 2 {
				var err error
				if n, err = strconv.Atoi(positional[1]); err != nil || n < 1 || n > 64 {
					return nil, fmt.Errorf("free-ports takes a count from 1 to 64, got %q", positional[1])
				}
			} else if len(positional) > 2 {
				return nil, fmt.Errorf("free-ports takes one count")
			}
			cfg.freePorts = n
			return cfg, nil
		}
	}
	if cfg.command == "run" {
		for _, name := range positional {
			if name == "all" {
				cfg.scenarios = append(cfg.scenarios, scenarioNames()...)
				continue
			}
			if findScenario(name) == nil {
				return nil, fmt.Errorf("unknown scenario %q; the scenarios are %s (or all)", name, strings.Join(scenarioNames(), ", "))
			}
			cfg.scenarios = append(cfg.scenarios, name)
		}
		if len(cfg.scenarios) == 0 {
			return nil, fmt.Errorf("name at least one scenario: %s (or all)", strings.Join(scenarioNames(), ", "))
		}
		cfg.scenarios = slices.Compact(cfg.scenarios)
	}

	var err error
	if cfg.targets, err = parseTargets(*targets); err != nil {
		return nil, err
	}
	if cfg.admin, err = baseURL("--admin", cfg.admin); err != nil {
		return nil, err
	}
	switch {
	case cfg.connections < 1:
		return nil, fmt.Errorf("--connections must be at least 1")
	case cfg.accounts < 0:
		return nil, fmt.Errorf("--accounts must be 0 (one per connection) or more")
	case cfg.requests < 0:
		return nil, fmt.Errorf("--requests must not be negative")
	case cfg.requests == 0 && cfg.duration <= 0:
		return nil, fmt.Errorf("--duration must be positive (or set --requests)")
	case cfg.rate < 0:
		return nil, fmt.Errorf("--rate must not be negative")
	case cfg.timeout <= 0:
		return nil, fmt.Errorf("--timeout must be positive")
	case cfg.rounds < 1:
		return nil, fmt.Errorf("--rounds must be at least 1")
	case cfg.rounds > 1 && cfg.command != "compare-etcd" && cfg.command != "read-ratios":
		return nil, fmt.Errorf("--rounds is for compare-etcd and read-ratios")
	}
	if err := checkWatchFlags(cfg, flagsSet(fs)); err != nil {
		return nil, err
	}
	if err := checkNotifyFlags(cfg, flagsSet(fs)); err != nil {
		return nil, err
	}
	if cfg.accounts == 0 {
		cfg.accounts = cfg.connections
	}
	if cfg.command == "compare-etcd" && cfg.requests == 0 {
		cfg.requests = defaultEtcdRequests
	}
	return cfg, nil
}

// parseTargets splits --targets into base URLs.
func parseTargets(s string) ([]string, error) {
	var out []string
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		u, err := baseURL("--targets", part)
		if err != nil {
			return nil, err
		}
		out = append(out, u)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--targets needs at least one URL")
	}
	return out, nil
}

// baseURL checks an http(s) URL with a host and drops a trailing slash.
func baseURL(flagName, s string) (string, error) {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("%s: %q is not an http:// or https:// URL with a host", flagName, s)
	}
	return strings.TrimRight(s, "/"), nil
}

func printUsage(w io.Writer) {
	fmt.Fprint(w, `bench load-tests addrwatch over real HTTP.

Usage:
  go run ./bench [flags] SCENARIO...       run scenarios in order against --targets
  go run ./bench [flags] compare-etcd      the same durable writes through a 3-node etcd, then addrwatch
  go run ./bench [flags] read-ratios       GET /v1/me and a 10-card list against a bare fasthttp server, in turn (--rounds)
  go run ./bench [flags] watch             start btcd (regtest) and addrwatchd, watch --addresses, mine --blocks, time the balances
  go run ./bench [flags] notify            as watch, with a webhook per account to receivers in bench: time block → signed
                                           webhook, then a burst of deliveries with a slow receiver
  go run ./bench bare-server               serve {"ok":true} on a free loopback port, printed first (read-ratios starts it)
  go run ./bench --data DIR fsync          time a 4 KiB append + fsync on DIR's disk (--requests, default 2000)
  go run ./bench free-ports N              print N free loopback addresses (used by make bench)

Start a server first, without the rate limits that would otherwise throttle it,
and point --data at its data dir so bench can read its admin token:
  make build && bin/addrwatchd --limits off --data /tmp/aw
  go run ./bench --data /tmp/aw sheet-put reads

Scenarios:
`)
	for _, s := range scenarios {
		fmt.Fprintf(w, "  %-12s %s\n", s.name, s.summary)
	}
	fmt.Fprint(w, `  all          every scenario above, in that order

Flags:
  --targets URLS       comma-separated public URLs of the nodes (default http://127.0.0.1:8080)
  --admin URL          admin URL of one node (default http://127.0.0.1:8081)
  --admin-token T      admin token (default $ADDRWATCH_ADMIN_TOKEN, else read from --data)
  --data DIR           the server's data dir, for <DIR>/admin-token (default ./data)
  --accounts N         accounts to spread the load over (default: one per connection)
  --connections N, -c  concurrent connections, each with one request in flight (default 32)
  --duration D         how long each scenario runs (default 10s)
  --requests N         a fixed number of requests per scenario instead of --duration
  --rate R             open loop: R requests/s in total, latency timed from each intended send time
  --timeout D          per-request timeout (default 10s)
  --wait D             wait this long for the admin /readyz (default 15s)
  --json               machine-readable results on stdout; the table goes to stderr
  --plot FILE.svg      SVG of throughput and p99 per second, one panel per scenario
  --etcd PATH          compare-etcd: the etcd binary (default etcd; Debian: apt-get install etcd-server)
  --rounds N           compare-etcd, read-ratios: the reference then addrwatch, N times in turn; every round's ratio and their median

watch starts its own btcd regtest node and --nodes addrwatchd (--targets,
--admin and --data are not used), and takes these flags:
  --server PATH        the addrwatchd binary (default bin/addrwatchd, as make build leaves it)
  --source S           what the servers follow: btcd (default), or an electrum or esplora
                       test server over it, run in bench, which counts the requests it answers
  --addresses K        watched addresses in all, spread over the accounts' cards (default 1000)
  --accounts A         accounts holding them, at most 110 addresses each (default 10)
  --blocks B           blocks to mine and time (default 50)
  --block-txs M        transactions before each block (default 20)
  --watched-share F    the share of them paying watched addresses (default 0.25)
  --chain-poll D       the server's --chain-poll (default 2s, the server's own)
  --nodes N            addrwatchd nodes in one raft cluster: 1, 3 or 5 (default 1)
  --reorgs N           reorgs of the newest block or two, after N of the blocks (default 0)
  --leader-kills N     SIGKILLs of the raft leader, in N of the blocks, each restarted (default 0)
The run ends with an audit of every payment to a watched address against
btcd on every node, and fails when a record misses or double-counts one.

notify starts the same node and servers (with --notify-allow-private), takes
watch's flags but --reorgs and --leader-kills, gives every account a webhook
to a receiver in bench, times each block's tx_confirmed webhooks from btcd's
announcement, and then runs a throughput phase on accounts of its own:
  --burst-accounts N   accounts of the throughput phase, 0 skips it (default 60)
  --burst-channels N   webhook channels each, one receiver an account (default 4)
  --burst-addresses N  watched addresses each, all paid in one block (default 100)
  --slow-answer D      how long one channel's receiver takes to answer (default 2s)
Every signature is checked, and a missing or badly signed event fails the run.

Examples:
  go run ./bench --data /tmp/aw --duration 30s sheet-put sheet-patch
  go run ./bench --data /tmp/aw --rate 2000 --plot run.svg agent-mix
  go run ./bench --data /tmp/aw --requests 20000 --json all > run.json
  go run ./bench --targets http://127.0.0.1:8181,http://127.0.0.1:8182,http://127.0.0.1:8183 \
      --admin http://127.0.0.1:8191 --admin-token T -c 64 sheet-put
  go run ./bench --data /tmp/aw --requests 10000 compare-etcd
  make build && go run ./bench --addresses 1000 --blocks 50 watch

bench/README.md explains each scenario and every column of the output.
`)
}
