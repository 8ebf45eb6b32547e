package main

import (
	"errors"
	"flag"
	"slices"
	"strings"
	"testing"
	"time"
)

func noEnv(string) string { return "" }

func TestParseDefaults(t *testing.T) {
	t.Parallel()
	cfg, err := parseArgs([]string{"sheet-put"}, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.command != "run" || !slices.Equal(cfg.scenarios, []string{"sheet-put"}) || !slices.Equal(cfg.targets, []string{"http://127.0.0.1:8080"}) ||
		cfg.admin != "http://127.0.0.1:8081" || cfg.connections != 32 || cfg.accounts != 32 || cfg.duration != 10*time.Second || cfg.rate != 0 || cfg.data != "./data" {
		t.Fatalf("defaults: %+v", cfg)
	}
}

func TestParseFlagsAnywhere(t *testing.T) {
	t.Parallel()
	cfg, err := parseArgs([]string{"--targets", "http://a:1/, http://b:2", "reads", "-c", "8", "--accounts=2", "sheet-put", "--rate", "1500", "--duration", "5s", "--json", "--plot", "x.svg"}, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(cfg.targets, []string{"http://a:1", "http://b:2"}) || !slices.Equal(cfg.scenarios, []string{"reads", "sheet-put"}) ||
		cfg.connections != 8 || cfg.accounts != 2 || cfg.rate != 1500 || cfg.duration != 5*time.Second || !cfg.jsonOut || cfg.plot != "x.svg" {
		t.Fatalf("parsed %+v", cfg)
	}
}

func TestParseAll(t *testing.T) {
	t.Parallel()
	cfg, err := parseArgs([]string{"all"}, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(cfg.scenarios, scenarioNames()) {
		t.Fatalf("all = %v", cfg.scenarios)
	}
}

func TestParseAdminTokenFromEnv(t *testing.T) {
	t.Parallel()
	env := func(k string) string {
		if k == "ADDRWATCH_ADMIN_TOKEN" {
			return "from-env"
		}
		return ""
	}
	cfg, _ := parseArgs([]string{"reads"}, env)
	if cfg.adminToken != "from-env" {
		t.Fatalf("admin token %q", cfg.adminToken)
	}
	cfg, _ = parseArgs([]string{"reads", "--admin-token", "flag"}, env)
	if cfg.adminToken != "flag" {
		t.Fatalf("the flag should win over the environment, got %q", cfg.adminToken)
	}
}

func TestParseCommands(t *testing.T) {
	t.Parallel()
	cfg, err := parseArgs([]string{"compare-etcd", "-c", "16"}, noEnv)
	if err != nil || cfg.command != "compare-etcd" || cfg.requests != defaultEtcdRequests || cfg.connections != 16 {
		t.Fatalf("compare-etcd: %+v %v", cfg, err)
	}
	cfg, err = parseArgs([]string{"compare-etcd", "--rounds", "3"}, noEnv)
	if err != nil || cfg.rounds != 3 {
		t.Fatalf("compare-etcd --rounds 3: %+v %v", cfg, err)
	}
	cfg, err = parseArgs([]string{"read-ratios", "--rounds", "3", "-c", "64"}, noEnv)
	if err != nil || cfg.command != "read-ratios" || cfg.rounds != 3 || cfg.connections != 64 {
		t.Fatalf("read-ratios --rounds 3: %+v %v", cfg, err)
	}
	cfg, err = parseArgs([]string{"bare-server"}, noEnv)
	if err != nil || cfg.command != "bare-server" {
		t.Fatalf("bare-server: %+v %v", cfg, err)
	}
	cfg, err = parseArgs([]string{"free-ports", "3"}, noEnv)
	if err != nil || cfg.command != "free-ports" || cfg.freePorts != 3 {
		t.Fatalf("free-ports: %+v %v", cfg, err)
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "name at least one scenario"},
		{[]string{"nope"}, `unknown scenario "nope"`},
		{[]string{"reads", "--targets", "127.0.0.1:8080"}, "--targets"},
		{[]string{"reads", "--targets", ""}, "--targets needs at least one URL"},
		{[]string{"reads", "--admin", "ftp://x"}, "--admin"},
		{[]string{"reads", "-c", "0"}, "--connections"},
		{[]string{"reads", "--rate", "-1"}, "--rate"},
		{[]string{"reads", "--duration", "0s"}, "--duration"},
		{[]string{"reads", "--bogus"}, "bogus"},
		{[]string{"compare-etcd", "reads"}, "takes no scenarios"},
		{[]string{"read-ratios", "reads"}, "read-ratios takes no scenarios"},
		{[]string{"bare-server", "x"}, "bare-server takes no arguments"},
		{[]string{"compare-etcd", "--rounds", "0"}, "--rounds must be at least 1"},
		{[]string{"reads", "--rounds", "3"}, "--rounds is for compare-etcd and read-ratios"},
		{[]string{"free-ports", "zero"}, "free-ports"},
	} {
		_, err := parseArgs(c.args, noEnv)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("parseArgs(%q) = %v, want an error containing %q", c.args, err, c.want)
		}
	}
	if _, err := parseArgs([]string{"--help"}, noEnv); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("--help: %v", err)
	}
}

// Every Sheet has exactly one owning worker, whatever the ratio of
// connections to accounts, and a worker's first Sheet is e.sheet(w).
func TestWorkersOwnTheirSheets(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ connections, accounts int }{{32, 32}, {32, 4}, {10, 3}, {9, 1}, {4, 16}, {3, 10}} {
		per := max((c.connections+c.accounts-1)/c.accounts, 1)
		fix := &fixture{}
		total := 0
		for range c.accounts {
			a := &account{}
			for range per {
				a.sheets = append(a.sheets, &sheetSpace{})
				total++
			}
			fix.accounts = append(fix.accounts, a)
		}
		e := &env{cfg: &config{targets: []string{"t"}, connections: c.connections}, fix: fix}
		owner := map[*sheetSpace]int{}
		for w := range c.connections {
			owned := e.sheetsOf(w)
			if len(owned) == 0 || owned[0].sheet != e.sheet(w) {
				t.Fatalf("%d connections over %d accounts: worker %d's first Sheet is not e.sheet(w)", c.connections, c.accounts, w)
			}
			for _, o := range owned {
				if prev, dup := owner[o.sheet]; dup {
					t.Fatalf("%d connections over %d accounts: workers %d and %d share a Sheet", c.connections, c.accounts, prev, w)
				}
				owner[o.sheet] = w
			}
		}
		if len(owner) != total {
			t.Fatalf("%d connections over %d accounts: %d of %d Sheets have an owner", c.connections, c.accounts, len(owner), total)
		}
	}
}
