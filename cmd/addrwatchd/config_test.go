package main

import (
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/addrwatch/addrwatch/chain"
)

func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestParseConfigDefaults(t *testing.T) {
	c, err := parseConfig(nil, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.HTTP != "127.0.0.1:8080" || c.Admin != "127.0.0.1:8081" || c.Data != "./data" || c.NodeID != "node1" ||
		c.Raft != "127.0.0.1:7000" || c.Chain.String() != "sim" || c.Network != chain.Mainnet || c.ChainProxy != nil || c.ChainCert != "" || c.Limits != "spec" || c.Demo || len(c.Peers) != 0 || c.AdminToken != "" || c.OpenMetrics || c.RaftLog != "wal" {
		t.Fatalf("defaults differ from ARCHITECTURE.md: %+v", c)
	}
}

func TestParseConfigEnvironmentAndFlags(t *testing.T) {
	e := env(map[string]string{
		"ADDRWATCH_HTTP":            "127.0.0.1:9090",
		"ADDRWATCH_ADMIN_TOKEN":     "from-env",
		"ADDRWATCH_NODE_ID":         "n7",
		"ADDRWATCH_PEERS":           "n7=127.0.0.1:7007,n8=127.0.0.1:7008",
		"ADDRWATCH_TRUSTED_PROXIES": "10.0.0.0/8, 192.168.1.0/24",
		"ADDRWATCH_DEMO":            "true",
		"ADDRWATCH_LIMITS":          "off",
		"ADDRWATCH_OPEN_METRICS":    "true",
		"ADDRWATCH_RAFT_LOG":        "bolt",
	})
	c, err := parseConfig([]string{"--http", "127.0.0.1:9191", "--upstream", "http://127.0.0.1:3002/api"}, e)
	if err != nil {
		t.Fatal(err)
	}
	if c.HTTP != "127.0.0.1:9191" {
		t.Errorf("a flag must win over the environment: http %q", c.HTTP)
	}
	if c.AdminToken != "from-env" || c.NodeID != "n7" || !c.Demo || c.Limits != "off" || c.Chain.String() != "esplora:http://127.0.0.1:3002/api" || !c.OpenMetrics || c.RaftLog != "bolt" {
		t.Errorf("environment not applied: %+v", c)
	}
	if len(c.Peers) != 2 || c.Peers[1].ID != "n8" || c.Peers[1].RaftAddr != "127.0.0.1:7008" {
		t.Errorf("peers: %+v", c.Peers)
	}
	if len(c.TrustedProxies) != 2 || c.TrustedProxies[1].String() != "192.168.1.0/24" {
		t.Errorf("trusted proxies: %v", c.TrustedProxies)
	}
}

func TestParseConfigRejectsBadValues(t *testing.T) {
	cases := map[string][]string{
		"limits":                  {"--limits", "sometimes"},
		"upstream":                {"--upstream", "ftp://x"},
		"upstream no url":         {"--upstream", "esplora"},
		"chain":                   {"--chain", "bitcoind:http://x"},
		"chain and upstream":      {"--chain", "esplora:http://127.0.0.1:3002/api", "--upstream", "http://127.0.0.1:3003/api"},
		"btcd in the clear":       {"--chain", "btcd:http://rpc:pw@10.0.0.5:8334"},
		"chain proxy":             {"--chain", "esplora:https://mempool.space/api", "--chain-proxy", "http://127.0.0.1:9050"},
		"chain proxy for the sim": {"--chain-proxy", "socks5://127.0.0.1:9050"},
		"network":                 {"--network", "testnet3"},
		"sim off mainnet":         {"--network", "regtest"},
		"peers":                   {"--peers", "n1"},
		"peer addr":               {"--peers", "n1=nohost"},
		"proxies":                 {"--trusted-proxies", "10.0.0.0"},
		"http":                    {"--http", "8080"},
		"node id":                 {"--node-id", ""},
		"stray argument":          {"extra"},
		"raft log":                {"--raft-log", "sqlite"},
		"no groups":               {"--groups", "0"},
		"too many groups":         {"--groups", "65"},
		"unknown flag":            {"--nope"},
	}
	for name, args := range cases {
		t.Run(name, func(t *testing.T) {
			if _, err := parseConfig(args, env(nil)); err == nil {
				t.Fatalf("%v accepted", args)
			}
		})
	}
	if _, err := parseConfig(nil, env(map[string]string{"ADDRWATCH_DEMO": "maybe"})); err == nil {
		t.Fatal("ADDRWATCH_DEMO=maybe accepted")
	}
}

func TestParseConfigHelp(t *testing.T) {
	_, err := parseConfig([]string{"--help"}, env(nil))
	if !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("--help: %v", err)
	}
}

func TestAdminTokenIsGeneratedOnceWithMode0600(t *testing.T) {
	dir := t.TempDir()
	first, err := loadAdminToken(config{Data: dir})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(first, "awa.") || len(first) < 60 {
		t.Fatalf("generated token %q is too short", first)
	}
	info, err := os.Stat(filepath.Join(dir, "admin-token"))
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o600 {
		t.Fatalf("admin-token mode %v, want 0600", info.Mode().Perm())
	}
	second, err := loadAdminToken(config{Data: dir})
	if err != nil || second != first {
		t.Fatalf("second start read %q, %v; want the first token", second, err)
	}
	given, err := loadAdminToken(config{Data: dir, AdminToken: "explicit"})
	if err != nil || given != "explicit" {
		t.Fatalf("--admin-token ignored: %q, %v", given, err)
	}
}

func TestAdminTokenEmptyFileIsAnError(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "admin-token"), []byte("\n"), 0o600)
	if _, err := loadAdminToken(config{Data: dir}); err == nil {
		t.Fatal("an empty admin-token file was accepted")
	}
}

// TestParseConfigNodeTraffic: without the --cluster-* files a node is
// left to its data dir's own CA (owntls.go), wherever --raft is; plain
// TCP needs --insecure-cluster; the files may come from the environment.
func TestParseConfigNodeTraffic(t *testing.T) {
	for _, args := range [][]string{
		{"--raft", "127.0.0.1:7000"},
		{"--raft", "10.0.0.5:7000"},
		{"--raft", "[::1]:7000", "--peers", "node1=[::1]:7000,n2=127.0.0.2:7000"},
	} {
		c, err := parseConfig(args, env(nil))
		if err != nil || c.ClusterTLS != nil || c.InsecureCluster {
			t.Fatalf("%v: %+v, %v", args, c, err)
		}
	}
	c, err := parseConfig([]string{"--raft", "10.0.0.5:7000", "--insecure-cluster"}, env(nil))
	if err != nil || !c.InsecureCluster {
		t.Fatalf("--insecure-cluster: %+v, %v", c, err)
	}
	c, err = parseConfig(nil, env(map[string]string{"ADDRWATCH_RAFT": "10.0.0.5:7000", "ADDRWATCH_CLUSTER_CA": "ca.crt",
		"ADDRWATCH_CLUSTER_CERT": "n1.crt", "ADDRWATCH_CLUSTER_KEY": "n1.key"}))
	if err != nil || c.ClusterTLS == nil || c.ClusterTLS.CA != "ca.crt" || c.ClusterTLS.Cert != "n1.crt" || c.ClusterTLS.Key != "n1.key" {
		t.Fatalf("TLS from the environment: %+v, %v", c, err)
	}
}

func TestParseConfigClusterTLSFlagsGoTogether(t *testing.T) {
	for name, args := range map[string][]string{
		"ca only":          {"--cluster-ca", "ca.crt"},
		"no key":           {"--cluster-ca", "ca.crt", "--cluster-cert", "n1.crt"},
		"no ca":            {"--cluster-cert", "n1.crt", "--cluster-key", "n1.key"},
		"tls and insecure": {"--cluster-ca", "ca.crt", "--cluster-cert", "n1.crt", "--cluster-key", "n1.key", "--insecure-cluster"},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := parseConfig(args, env(nil)); err == nil {
				t.Fatalf("%v accepted", args)
			}
		})
	}
}

func TestParseConfigPublicTLSFilesGoTogether(t *testing.T) {
	c, err := parseConfig(nil, env(map[string]string{"ADDRWATCH_TLS_CERT": "/etc/addrwatch/cert.pem", "ADDRWATCH_TLS_KEY": "/etc/addrwatch/key.pem"}))
	if err != nil {
		t.Fatal(err)
	}
	if c.PublicTLS == nil || c.PublicTLS.Cert != "/etc/addrwatch/cert.pem" || c.PublicTLS.Key != "/etc/addrwatch/key.pem" {
		t.Fatalf("ADDRWATCH_TLS_CERT/KEY not applied: %+v", c.PublicTLS)
	}
	if c, err := parseConfig(nil, env(nil)); err != nil || c.PublicTLS != nil {
		t.Fatalf("without the files the public listener must be plain HTTP: %+v, %v", c.PublicTLS, err)
	}
	for _, args := range [][]string{{"--tls-cert", "cert.pem"}, {"--tls-key", "key.pem"}} {
		if _, err := parseConfig(args, env(nil)); err == nil || !strings.Contains(err.Error(), "go together") {
			t.Errorf("%v: err %v, want the files to go together", args, err)
		}
	}
}

func TestParseConfigSessionIdle(t *testing.T) {
	c, err := parseConfig(nil, env(nil))
	if err != nil || c.SessionIdle != 30*time.Minute {
		t.Fatalf("default session idle %s, %v; want 30m", c.SessionIdle, err)
	}
	if c, err = parseConfig(nil, env(map[string]string{"ADDRWATCH_SESSION_IDLE": "45m"})); err != nil || c.SessionIdle != 45*time.Minute {
		t.Fatalf("ADDRWATCH_SESSION_IDLE=45m gave %s, %v", c.SessionIdle, err)
	}
	for _, bad := range []string{"1m", "25h", "abc", "-5m"} {
		if _, err := parseConfig([]string{"--session-idle", bad}, env(nil)); err == nil {
			t.Errorf("--session-idle %s accepted", bad)
		}
		if _, err := parseConfig(nil, env(map[string]string{"ADDRWATCH_SESSION_IDLE": bad})); err == nil {
			t.Errorf("ADDRWATCH_SESSION_IDLE=%s accepted", bad)
		}
	}
}

func TestParseConfigGroups(t *testing.T) {
	c, err := parseConfig(nil, env(nil))
	if err != nil || c.Groups != 1 {
		t.Fatalf("default: %d groups, %v", c.Groups, err)
	}
	if c, err = parseConfig([]string{"--groups", "4"}, env(nil)); err != nil || c.Groups != 4 {
		t.Fatalf("--groups 4: %d, %v", c.Groups, err)
	}
	if c, err = parseConfig(nil, env(map[string]string{"ADDRWATCH_GROUPS": "3"})); err != nil || c.Groups != 3 {
		t.Fatalf("ADDRWATCH_GROUPS=3: %d, %v", c.Groups, err)
	}
	if _, err = parseConfig(nil, env(map[string]string{"ADDRWATCH_GROUPS": "three"})); err == nil {
		t.Fatal("ADDRWATCH_GROUPS=three accepted")
	}
}

// --version prints the build and starts nothing: no data dir is made, no
// line logged.
func TestVersionPrintsTheBuildAndStartsNothing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "never")
	var stdout, stderr strings.Builder
	err := run(context.Background(), []string{"--version", "--data", dir}, env(nil), &stdout, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	if out := stdout.String(); !strings.HasPrefix(out, "addrwatchd ") || !strings.Contains(out, "(commit ") || !strings.Contains(out, runtime.Version()) {
		t.Errorf("--version printed %q", out)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("--version made the data dir: %v", err)
	}
	if stderr.Len() != 0 {
		t.Errorf("--version logged %q", stderr.String())
	}
}
