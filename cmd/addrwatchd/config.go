package main

import (
	"flag"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"

	"github.com/addrwatch/addrwatch/cluster"
)

// config is the server's settings: each flag is also ADDRWATCH_<NAME> in the
// environment (dashes become underscores); a flag on the command line wins.
type config struct {
	HTTP           string
	Admin          string
	Data           string
	AdminToken     string
	NodeID         string
	Raft           string
	Peers          []cluster.Peer
	Upstream       string
	Limits         string
	TrustedProxies []*net.IPNet
	Demo           bool
	Join           bool
	// RecoverFromSnapshot accepts losing the writes after the newest
	// snapshot when the log and stable store are missing or empty.
	RecoverFromSnapshot bool
}

func parseConfig(args []string, getenv func(string) string) (config, error) {
	fs := flag.NewFlagSet("addrwatchd", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "addrwatchd: the addrwatch server.\n\nUsage: addrwatchd [flags]\n\nEvery flag can also be set as ADDRWATCH_<NAME> in the environment,\nfor example ADDRWATCH_ADMIN_TOKEN for --admin-token.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	env := func(name, def string) string {
		if v := getenv("ADDRWATCH_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))); v != "" {
			return v
		}
		return def
	}
	var c config
	var peers, proxies string
	fs.StringVar(&c.HTTP, "http", env("http", "127.0.0.1:8080"), "public listener: agent API at /v1, owner API at /owner/v1")
	fs.StringVar(&c.Admin, "admin", env("admin", "127.0.0.1:8081"), "operator listener: /admin/v1, /healthz, /readyz")
	fs.StringVar(&c.Data, "data", env("data", "./data"), "directory for the raft log, stable store and snapshots")
	fs.StringVar(&c.AdminToken, "admin-token", env("admin-token", ""), "operator bearer token; when unset it is generated on first start and written to <data>/admin-token")
	fs.StringVar(&c.NodeID, "node-id", env("node-id", "node1"), "this node's raft id")
	fs.StringVar(&c.Raft, "raft", env("raft", "127.0.0.1:7000"), "raft transport address")
	fs.StringVar(&peers, "peers", env("peers", ""), "id=raftaddr,... of all voters when bootstrapping a cluster; empty means a one-node cluster")
	fs.StringVar(&c.Upstream, "upstream", env("upstream", "sim"), "history upstream: sim (embedded simulated chain) or an Esplora base URL")
	fs.StringVar(&c.Limits, "limits", env("limits", "spec"), "spec enforces the spec's rate limits; off disables edge and Sheet-write limits; account keeps only the per-account Sheet-write budget (edge limits left to a proxy in front)")
	fs.StringVar(&proxies, "trusted-proxies", env("trusted-proxies", ""), "CIDRs whose X-Forwarded-For names the client IP for rate limits")
	demoDefault, err := parseBool(env("demo", "false"))
	if err != nil {
		return c, fmt.Errorf("ADDRWATCH_DEMO: %w", err)
	}
	fs.BoolVar(&c.Demo, "demo", demoDefault, "on a new data dir, create a demo account and print its owner secret and one read and one write key")
	joinDefault, err := parseBool(env("join", "false"))
	if err != nil {
		return c, fmt.Errorf("ADDRWATCH_JOIN: %w", err)
	}
	fs.BoolVar(&c.Join, "join", joinDefault, "on a new data dir, wait to be added to a running cluster (addrwatch cluster add) instead of bootstrapping one")
	recoverDefault, err := parseBool(env("recover-from-snapshot", "false"))
	if err != nil {
		return c, fmt.Errorf("ADDRWATCH_RECOVER_FROM_SNAPSHOT: %w", err)
	}
	fs.BoolVar(&c.RecoverFromSnapshot, "recover-from-snapshot", recoverDefault, "when the raft log and stable store are missing or empty but a snapshot is left, start from that snapshot and lose every write after it (without it the server refuses to start)")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if c.Peers, err = cluster.ParsePeers(peers); err != nil {
		return c, fmt.Errorf("--peers: %w", err)
	}
	if c.Upstream != "sim" {
		u, err := url.Parse(c.Upstream)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return c, fmt.Errorf("--upstream must be sim or an http(s) Esplora base URL")
		}
	}
	if c.Limits != "spec" && c.Limits != "off" && c.Limits != "account" {
		return c, fmt.Errorf("--limits must be spec, off or account")
	}
	for _, p := range strings.Split(proxies, ",") {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		_, n, err := net.ParseCIDR(p)
		if err != nil {
			return c, fmt.Errorf("--trusted-proxies: %w", err)
		}
		c.TrustedProxies = append(c.TrustedProxies, n)
	}
	for name, addr := range map[string]string{"--http": c.HTTP, "--admin": c.Admin, "--raft": c.Raft} {
		if _, _, err := net.SplitHostPort(addr); err != nil {
			return c, fmt.Errorf("%s: %w", name, err)
		}
	}
	if c.NodeID == "" {
		return c, fmt.Errorf("--node-id must not be empty")
	}
	return c, nil
}

func parseBool(s string) (bool, error) {
	v, err := strconv.ParseBool(s)
	if err != nil {
		return false, fmt.Errorf("%q is not a boolean", s)
	}
	return v, nil
}
