package main

import (
	"flag"
	"fmt"
	"net"
	"net/mail"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/addrwatch/addrwatch/chain"
	"github.com/addrwatch/addrwatch/cluster"
	"github.com/addrwatch/addrwatch/httpd"
	"github.com/addrwatch/addrwatch/persistence"
)

// config is the server's settings: each flag is also ADDRWATCH_<NAME> in the
// environment (dashes become underscores); a flag on the command line wins.
type config struct {
	ShowVersion bool // --version: print the build and exit
	HTTP        string
	Admin       string
	Data        string
	AdminToken  string
	NodeID      string
	Raft        string
	Peers       []cluster.Peer
	// Chain is the chain source (--chain, or --upstream, its old name).
	Chain chain.SourceSpec
	// ChainCert is the --chain-cert file: a PEM certificate to trust for
	// the chain source; empty for the system's roots.
	ChainCert string
	// ChainProxy is the --chain-proxy SOCKS5 proxy (Tor) every request to
	// the chain source goes through; nil for none.
	ChainProxy *url.URL
	// Network is the Bitcoin network of the data dir (--network).
	Network chain.Network
	// ChainPoll is how often the chain follower asks the source's tip
	// (--chain-poll); it reads the mempool every chainMempoolPolls polls.
	ChainPoll      time.Duration
	Limits         string
	TrustedProxies []*net.IPNet
	Demo           bool
	Join           bool
	// ClusterTLS names the files of mutual TLS between nodes; nil means
	// node traffic is plain TCP.
	ClusterTLS      *clusterTLSFiles
	InsecureCluster bool
	OpenMetrics     bool
	// PublicTLS names the --tls-cert and --tls-key files; nil means the
	// public listener speaks plain HTTP.
	PublicTLS *publicTLSFiles
	// SessionIdle is how long an unused owner session lives on.
	SessionIdle time.Duration
	// RecoverFromSnapshot accepts losing the writes after the newest
	// snapshot when the log and stable store are missing or empty.
	RecoverFromSnapshot bool
	// RaftLog is the log store of a new data dir.
	RaftLog persistence.LogStore
	// Groups is the number of raft groups accounts are sharded over; 1
	// is one group, as every release before sharding ran.
	Groups int
	// NotifyKey is the --notify-key file; empty means <data>/notify-key,
	// made on first start.
	NotifyKey string
	// NotifyAllowPrivate lets owners' webhooks and ntfy topics reach
	// loopback, private and link-local addresses (labs only).
	NotifyAllowPrivate bool
	// SMTPRelay is the --smtp-relay host:port email notifications go
	// through; empty means this node sends no email (and the owner API
	// refuses email channels). SMTPFrom is their sender, SMTPUser and
	// the password in SMTPPasswordFile the relay's AUTH PLAIN, and
	// SMTPPlaintext lets a relay without STARTTLS be used in clear.
	SMTPRelay        string
	SMTPFrom         string
	SMTPUser         string
	SMTPPasswordFile string
	SMTPPlaintext    bool
}

// Bounds of --chain-poll, and how many polls apart the mempool is read.
const (
	chainPollMin      = 100 * time.Millisecond
	chainPollMax      = 10 * time.Minute
	chainMempoolPolls = 5
)

// parseChainFlags reads --chain (or --upstream, its old name: one or the
// other) and --chain-proxy. Its errors never repeat a value, which may
// hold a password.
func parseChainFlags(chainFlag, upstream, proxy string) (chain.SourceSpec, *url.URL, error) {
	switch {
	case chainFlag != "" && upstream != "" && chainFlag != upstream:
		return chain.SourceSpec{}, nil, fmt.Errorf("--upstream is the old name of --chain: give one of them")
	case chainFlag == "":
		chainFlag = upstream
	}
	if chainFlag == "" {
		chainFlag = string(chain.SourceSim)
	}
	spec, err := chain.ParseSourceSpec(chainFlag)
	if err != nil {
		return chain.SourceSpec{}, nil, fmt.Errorf("--chain: %w", err)
	}
	if proxy == "" {
		return spec, nil, nil
	}
	u, err := url.Parse(proxy)
	if err != nil || u.Scheme != "socks5" || u.Port() == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
		return chain.SourceSpec{}, nil, fmt.Errorf("--chain-proxy must be socks5://HOST:PORT")
	}
	if spec.Kind == chain.SourceSim {
		return chain.SourceSpec{}, nil, fmt.Errorf("--chain-proxy is for a chain source across the network; the sim runs in this process")
	}
	return spec, u, nil
}

// clusterTLSFiles are --cluster-ca, --cluster-cert and --cluster-key.
type clusterTLSFiles struct{ CA, Cert, Key string }

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
	var clusterTLS clusterTLSFiles
	var publicTLS publicTLSFiles
	fs.StringVar(&c.HTTP, "http", env("http", "127.0.0.1:8080"), "public listener: agent API at /v1, owner API at /owner/v1")
	fs.StringVar(&c.Admin, "admin", env("admin", "127.0.0.1:8081"), "operator listener: /admin/v1, /metrics (admin token), /healthz, /readyz")
	fs.StringVar(&c.Data, "data", env("data", "./data"), "directory for the raft log, stable store and snapshots (and a backup upload while it is restored)")
	fs.StringVar(&c.AdminToken, "admin-token", env("admin-token", ""), "operator bearer token; when unset it is generated on first start and written to <data>/admin-token")
	fs.StringVar(&c.NodeID, "node-id", env("node-id", "node1"), "this node's raft id")
	fs.StringVar(&c.Raft, "raft", env("raft", "127.0.0.1:7000"), "raft transport address: where other nodes reach this one, for raft and for the requests followers forward to the leader; only a node that proves itself with a certificate of the cluster CA is served, on loopback too (see --cluster-ca)")
	fs.StringVar(&peers, "peers", env("peers", ""), "id=raftaddr,... of all voters when bootstrapping a cluster; empty means a one-node cluster")
	fs.StringVar(&clusterTLS.CA, "cluster-ca", env("cluster-ca", ""), "PEM file of the cluster CA: nodes talk mutual TLS and accept only peers with a certificate from it (addrwatch cluster certs makes one). Without --cluster-ca, --cluster-cert and --cluster-key a node uses the CA and certificate in <data>/cluster-tls, which a node without peers makes at its first start (a node with peers, by --peers, --join or its data dir, then refuses to start)")
	fs.StringVar(&clusterTLS.Cert, "cluster-cert", env("cluster-cert", ""), "PEM file of this node's certificate from the cluster CA")
	fs.StringVar(&clusterTLS.Key, "cluster-key", env("cluster-key", ""), "PEM file of this node's private key (keep it 0600: it lets its holder act as a node)")
	chainFlag := fs.String("chain", env("chain", ""), "the chain source: sim (the embedded simulated chain, the default), esplora:URL (an Esplora API such as https://mempool.space/api or your own), btcd:https://USER:PASS@HOST:PORT (your btcd's JSON-RPC, run with --addrindex --txindex), electrum:HOST:PORT or electrums:HOST:PORT (your Electrum server, TLS with electrums); someone else's server learns every address your owners watch. The password is never logged")
	upstreamFlag := fs.String("upstream", env("upstream", ""), "the old name of --chain: sim or an Esplora base URL")
	fs.StringVar(&c.ChainCert, "chain-cert", env("chain-cert", ""), "PEM file of a certificate to trust for the chain source (btcd's self-signed RPC certificate, an Electrum server's)")
	chainProxy := fs.String("chain-proxy", env("chain-proxy", ""), "socks5://HOST:PORT: reach the chain source through this SOCKS5 proxy (Tor), for every request")
	chainPollDefault, err := time.ParseDuration(env("chain-poll", "2s"))
	if err != nil {
		return c, fmt.Errorf("ADDRWATCH_CHAIN_POLL: %q is not a duration such as 2s", env("chain-poll", ""))
	}
	fs.DurationVar(&c.ChainPoll, "chain-poll", chainPollDefault, fmt.Sprintf("how often the chain follower asks the source for its tip (a new block makes it read every watched address) and, every %d of these, reads the mempool: %s to %s; a public explorer may want it slower", chainMempoolPolls, chainPollMin, chainPollMax))
	network := fs.String("network", env("network", string(chain.Mainnet)), "the Bitcoin network whose addresses cards hold and whose chain the source follows: mainnet, testnet, signet or regtest; fixed when a data dir is created (another value is then refused at start), and a source on another network is refused at start")
	fs.StringVar(&c.Limits, "limits", env("limits", "spec"), "spec enforces the spec's rate limits and caps each client address at 64 connections per listener; off disables edge, connection and Sheet-write limits; account keeps only the per-account Sheet-write budget (edge limits left to a proxy in front); the owner credential limits apply whatever this says")
	fs.StringVar(&proxies, "trusted-proxies", env("trusted-proxies", ""), "CIDRs whose X-Forwarded-For names the client IP for rate limits, and whose X-Forwarded-Proto: https makes a request HTTPS (Secure __Host- cookies only, HSTS); their connections are not capped")
	fs.StringVar(&publicTLS.Cert, "tls-cert", env("tls-cert", ""), "PEM file of the public listener's certificate (chain): with --tls-key, the site, /v1 and /owner/v1 are served over HTTPS only (TLS 1.3, or 1.2 with ECDHE AEAD suites; HSTS; only __Host- cookies), so a small deployment needs no proxy")
	fs.StringVar(&publicTLS.Key, "tls-key", env("tls-key", ""), "PEM file of the private key of --tls-cert (keep it 0600)")
	sessionIdleDefault, err := time.ParseDuration(env("session-idle", httpd.SessionIdleDefault.String()))
	if err != nil {
		return c, fmt.Errorf("ADDRWATCH_SESSION_IDLE: %q is not a duration such as 30m", env("session-idle", ""))
	}
	fs.DurationVar(&c.SessionIdle, "session-idle", sessionIdleDefault, fmt.Sprintf("how long an owner's session (sign-in) lives on unused, from %s to %s; each use extends it (to the minute), and no session outlives %s after sign-in",
		sessionIdleMin, httpd.SessionLifetime, httpd.SessionLifetime))
	demoDefault, err := parseBool(env("demo", "false"))
	if err != nil {
		return c, fmt.Errorf("ADDRWATCH_DEMO: %w", err)
	}
	fs.BoolVar(&c.Demo, "demo", demoDefault, "on a new data dir, create a demo account and print its owner secret and one read and one write key")
	joinDefault, err := parseBool(env("join", "false"))
	if err != nil {
		return c, fmt.Errorf("ADDRWATCH_JOIN: %w", err)
	}
	openMetricsDefault, err := parseBool(env("open-metrics", "false"))
	if err != nil {
		return c, fmt.Errorf("ADDRWATCH_OPEN_METRICS: %w", err)
	}
	fs.BoolVar(&c.OpenMetrics, "open-metrics", openMetricsDefault, "serve /metrics on the admin listener without the admin token: anyone who reaches that listener reads the request counts, account count and write rates")
	fs.StringVar(&c.NotifyKey, "notify-key", env("notify-key", ""), "file of the notify key (64 hex digits, mode 0600), from which webhook secrets are derived and with which owners' notification URLs are sealed in the replicated state; every node of a cluster must be given the same file. When unset, <data>/notify-key, made on first start")
	allowPrivateDefault, err := parseBool(env("notify-allow-private", "false"))
	if err != nil {
		return c, fmt.Errorf("ADDRWATCH_NOTIFY_ALLOW_PRIVATE: %w", err)
	}
	fs.BoolVar(&c.NotifyAllowPrivate, "notify-allow-private", allowPrivateDefault, "labs only: let owners' webhooks and ntfy topics reach loopback, private, link-local and shared addresses (this node's own network)")
	fs.StringVar(&c.SMTPRelay, "smtp-relay", env("smtp-relay", ""), "HOST:PORT of the SMTP relay that owners' email notifications go through (587 for submission), with STARTTLS; without it the server sends no email and refuses email channels")
	fs.StringVar(&c.SMTPFrom, "smtp-from", env("smtp-from", ""), "the sender of email notifications, an address or \"Name <address>\" (with --smtp-relay)")
	fs.StringVar(&c.SMTPUser, "smtp-user", env("smtp-user", ""), "the relay's user name for AUTH PLAIN, sent only over TLS (with --smtp-password-file)")
	fs.StringVar(&c.SMTPPasswordFile, "smtp-password-file", env("smtp-password-file", ""), "file holding the relay's password (mode 0600; a password is never taken on the command line, where every user of the machine can read it)")
	smtpPlaintextDefault, err := parseBool(env("smtp-plaintext", "false"))
	if err != nil {
		return c, fmt.Errorf("ADDRWATCH_SMTP_PLAINTEXT: %w", err)
	}
	fs.BoolVar(&c.SMTPPlaintext, "smtp-plaintext", smtpPlaintextDefault, "labs only: use a relay that does not offer STARTTLS in clear, where anyone on the path reads (and can alter) each message and its recipient; a relay that offers STARTTLS is always used with it, and the password is never sent in clear")
	fs.BoolVar(&c.Join, "join", joinDefault, "on a new data dir, wait to be added to a running cluster (addrwatch cluster add) instead of bootstrapping one")
	insecureDefault, err := parseBool(env("insecure-cluster", "false"))
	if err != nil {
		return c, fmt.Errorf("ADDRWATCH_INSECURE_CLUSTER: %w", err)
	}
	fs.BoolVar(&c.InsecureCluster, "insecure-cluster", insecureDefault, "labs only: plain, unauthenticated TCP between nodes instead of mutual TLS; any process that can reach the raft port, on this machine too, can then rewrite the raft log, install a snapshot and act as any node. A node then serves no forwarded admin request without its own admin token (give every node the same --admin-token) and no restore between groups")
	recoverDefault, err := parseBool(env("recover-from-snapshot", "false"))
	if err != nil {
		return c, fmt.Errorf("ADDRWATCH_RECOVER_FROM_SNAPSHOT: %w", err)
	}
	fs.BoolVar(&c.RecoverFromSnapshot, "recover-from-snapshot", recoverDefault, "start although the raft log is missing, emptied or shorter than the data dir's record (raft-record.json) says, from what is left (the newest snapshot, or the entries before the cut), losing every write after it, with a warning (without it the server refuses to start)")
	raftLog := fs.String("raft-log", env("raft-log", string(persistence.LogWAL)), "the raft log and stable store of a NEW data dir: wal (hashicorp/raft-wal, one sync per append) or bolt (raft-boltdb, the store of data dirs made before the WAL). A data dir keeps the store it already has (raft.db or wal/) whatever this says, and says which at start")
	groupsDefault, err := strconv.Atoi(env("groups", "1"))
	if err != nil {
		return c, fmt.Errorf("ADDRWATCH_GROUPS: %q is not a number", env("groups", ""))
	}
	fs.IntVar(&c.Groups, "groups", groupsDefault, fmt.Sprintf("experimental, for a NEW cluster only: shard accounts over this many raft groups (1 to %d), every node running every group, each group led and failed over on its own; every node needs the same value (cluster/SCALE.md)", cluster.MaxGroups))
	fs.BoolVar(&c.ShowVersion, "version", false, "print this build's version, commit, commit time, whether the tree was modified, and Go release, then exit")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if c.ShowVersion {
		return c, nil // nothing else is read: --version works whatever else is set
	}
	if c.RaftLog, err = persistence.ParseLogStore(*raftLog); err != nil {
		return c, fmt.Errorf("--raft-log: %w", err)
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if c.SessionIdle < sessionIdleMin || c.SessionIdle > httpd.SessionLifetime {
		return c, fmt.Errorf("--session-idle must be from %s to %s, not %s", sessionIdleMin, httpd.SessionLifetime, c.SessionIdle)
	}
	if c.Peers, err = cluster.ParsePeers(peers); err != nil {
		return c, fmt.Errorf("--peers: %w", err)
	}
	if c.Chain, c.ChainProxy, err = parseChainFlags(*chainFlag, *upstreamFlag, *chainProxy); err != nil {
		return c, err
	}
	if c.Network, err = chain.ParseNetwork(*network); err != nil {
		return c, fmt.Errorf("--network: %w", err)
	}
	if c.ChainPoll < chainPollMin || c.ChainPoll > chainPollMax {
		return c, fmt.Errorf("--chain-poll must be from %s to %s, not %s", chainPollMin, chainPollMax, c.ChainPoll)
	}
	if c.Chain.Kind == chain.SourceSim && c.Network != chain.Mainnet {
		return c, fmt.Errorf("--chain sim is a mainnet chain: give --network %s a source on %s (btcd:, electrum: or esplora:)", c.Network, c.Network)
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
	if c.Groups < 1 || c.Groups > cluster.MaxGroups {
		return c, fmt.Errorf("--groups must be from 1 to %d, not %d", cluster.MaxGroups, c.Groups)
	}
	if err := checkSMTP(c); err != nil {
		return c, err
	}
	if c.PublicTLS, err = checkPublicTLS(publicTLS); err != nil {
		return c, err
	}
	if c.ClusterTLS, err = checkNodeTraffic(clusterTLS, c.InsecureCluster); err != nil {
		return c, err
	}
	return c, nil
}

// checkNodeTraffic checks the flags of node-to-node traffic: mutual TLS
// with the three --cluster-* files, or with the data dir's own CA when
// none is given (owntls.go), or plain TCP when --insecure-cluster gives up
// authenticating nodes.
func checkNodeTraffic(files clusterTLSFiles, insecure bool) (*clusterTLSFiles, error) {
	given := 0
	for _, f := range []string{files.CA, files.Cert, files.Key} {
		if f != "" {
			given++
		}
	}
	switch {
	case given == 3 && insecure:
		return nil, fmt.Errorf("--insecure-cluster contradicts --cluster-ca, --cluster-cert and --cluster-key: give one or the other")
	case given == 3:
		return &files, nil
	case given > 0:
		return nil, fmt.Errorf("--cluster-ca, --cluster-cert and --cluster-key go together: give all three or none")
	}
	return nil, nil
}

// checkSMTP checks the --smtp-* flags: a relay needs a sender, a user
// needs a password file, and none of them means anything without a relay.
func checkSMTP(c config) error {
	if c.SMTPRelay == "" {
		if c.SMTPFrom != "" || c.SMTPUser != "" || c.SMTPPasswordFile != "" || c.SMTPPlaintext {
			return fmt.Errorf("--smtp-from, --smtp-user, --smtp-password-file and --smtp-plaintext need --smtp-relay")
		}
		return nil
	}
	if _, _, err := net.SplitHostPort(c.SMTPRelay); err != nil {
		return fmt.Errorf("--smtp-relay must be HOST:PORT: %w", err)
	}
	if c.SMTPFrom == "" {
		return fmt.Errorf("--smtp-relay needs --smtp-from, the sender of the notifications")
	}
	if _, err := mail.ParseAddress(c.SMTPFrom); err != nil {
		return fmt.Errorf("--smtp-from must be one email address: %w", err)
	}
	if (c.SMTPUser == "") != (c.SMTPPasswordFile == "") {
		return fmt.Errorf("--smtp-user and --smtp-password-file go together")
	}
	return nil
}

// sessionIdleMin is the shortest --session-idle: a session is extended at
// most once a minute, so a shorter idle time would let it expire while
// in use.
const sessionIdleMin = 2 * time.Minute

func parseBool(s string) (bool, error) {
	v, err := strconv.ParseBool(s)
	if err != nil {
		return false, fmt.Errorf("%q is not a boolean", s)
	}
	return v, nil
}
