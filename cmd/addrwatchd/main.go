// Command addrwatchd is the addrwatch server: one raft node with its account
// actors, the public listener (agent and owner APIs) and the admin listener.
package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/actors/registry"
	"github.com/addrwatch/addrwatch/chain"
	"github.com/addrwatch/addrwatch/cluster"
	"github.com/addrwatch/addrwatch/httpd"
	"github.com/addrwatch/addrwatch/httpd/balances"
	"github.com/addrwatch/addrwatch/httpd/edge"
	"github.com/addrwatch/addrwatch/httpd/site"
	"github.com/addrwatch/addrwatch/internal/buildinfo"
	"github.com/addrwatch/addrwatch/notify/deliver"
	"github.com/addrwatch/addrwatch/notify/egress"
	"github.com/addrwatch/addrwatch/watch"
)

// leaderWait bounds how long a fresh node waits for its first leader before
// giving up on --demo (the server keeps running).
const leaderWait = 30 * time.Second

// The history cache: how long an address's upstream answers are reused
// (force_refresh bypasses it), and how many addresses it holds.
const (
	historyTTL          = time.Minute
	historyAddressesMax = 10_000
)

func main() {
	makeFilesPrivate()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		fmt.Fprintln(os.Stderr, "addrwatchd:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cfg, err := parseConfig(args, getenv)
	if err != nil {
		return err
	}
	build := buildinfo.Read()
	if cfg.ShowVersion {
		_, err := fmt.Fprintln(stdout, build.String("addrwatchd"))
		return err
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	logger.Info("addrwatchd starting", build.LogAttrs()...)
	if err := os.MkdirAll(cfg.Data, 0o700); err != nil {
		return fmt.Errorf("data dir: %w", err)
	}
	if err := fixNetwork(cfg.Data, cfg.Network); err != nil {
		return err
	}
	adminToken, err := loadAdminToken(cfg)
	if err != nil {
		return err
	}
	notifyKey, err := loadNotifyKey(cfg, logger)
	if err != nil {
		return err
	}
	notifyEgress, err := egress.New(egress.Config{AllowPrivate: cfg.NotifyAllowPrivate})
	if err != nil {
		return err
	}

	nodeTLS, err := loadNodeTLS(cfg, logger)
	if err != nil {
		return err
	}
	publicTLS, err := loadPublicTLS(cfg.PublicTLS, logger)
	if err != nil {
		return err
	}

	// Only the fault test's build (faultinject.go) reroutes node
	// connections; this is nil otherwise.
	nodeDial, err := nodeDialFromEnv(getenv, logger)
	if err != nil {
		return err
	}

	metrics := prometheus.NewRegistry()
	metrics.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), build.Collector())
	if err := cluster.ExportRaftMetrics(metrics); err != nil {
		return fmt.Errorf("raft metrics: %w", err)
	}

	clusterCfg := cluster.Config{NodeID: cfg.NodeID, RaftAddr: cfg.Raft, DataDir: cfg.Data, Peers: cfg.Peers, Logger: logger,
		TLS: nodeTLS, Insecure: cfg.InsecureCluster, Dial: nodeDial, Join: cfg.Join, RecoverFromSnapshot: cfg.RecoverFromSnapshot, RaftLog: cfg.RaftLog}
	var store backend
	var demo demoNode
	var follow followerStore
	var delivery deliverStore
	if cfg.Groups > 1 {
		groups, err := cluster.OpenGroups(clusterCfg, cfg.Groups)
		if err != nil {
			return explainOpenError(err)
		}
		defer groups.Close()
		store = newGroupsStore(groups)
		follow = followerStore{accounts: groups, ids: groups.AccountIDs, leading: groups.ServesAny, now: time.Now}
		delivery = deliverStore{accounts: groups, ids: groups.AccountIDs, leadership: groupsLed(groups), serves: groups.Serves, now: time.Now}
		demo = demoNode{bootstrapped: groups.Bootstrapped, waitForLeader: groups.WaitForReady}
	} else {
		accounts := registry.New(logger)
		defer accounts.Shutdown()
		node, err := cluster.Open(clusterCfg, accounts)
		if err != nil {
			return explainOpenError(err)
		}
		defer node.Close()
		store = newNodeStore(node)
		follow = followerStore{accounts: node, ids: node.AccountIDs, leading: node.Serving, now: time.Now}
		delivery = deliverStore{accounts: node, ids: node.AccountIDs, leadership: leadsOne(node),
			serves: func(string) bool { return node.Serving() }, now: time.Now}
		demo = demoNode{bootstrapped: node.Bootstrapped, waitForLeader: node.WaitForLeader}
	}

	source, closeSource, err := openChain(ctx, cfg, logger)
	if err != nil {
		return err
	}
	defer closeSource()
	history := chain.NewHistoryCache(source, historyTTL, nil, historyAddressesMax)
	followCtx, stopFollowing := context.WithCancel(ctx)
	defer stopFollowing()
	relay, err := smtpRelay(cfg)
	if err != nil {
		return err
	}
	channels := notifyChannels(notifyKey, notifyEgress, relay)
	deliverer := deliver.New(delivery, channels, deliver.Options{Logger: logger.With("component", "deliverer"), Metrics: deliver.NewMetrics(metrics)})
	follow.wake = deliverer.Wake
	go deliverer.Run(followCtx)
	follower := watch.New(source, follow, watch.Options{Poll: cfg.ChainPoll, MempoolEvery: chainMempoolPolls * cfg.ChainPoll,
		Logger: logger.With("component", "follower")})
	go follower.Run(followCtx)

	store.registerMetrics(metrics)

	api := httpd.New(httpd.Config{Store: store, Operator: store, StatusParts: map[string]func() any{"follower": func() any { return follower.Stats() }, "deliverer": func() any { return deliverer.Stats() }}, Logger: logger, AdminToken: adminToken,
		EdgeLimits: cfg.Limits == "spec", SheetBudget: cfg.Limits != "off", History: history, Balances: balances.Observed(follow, balances.FromHistory(history)), TrustedProxies: cfg.TrustedProxies,
		Cluster: store, Metrics: metrics, SpoolDir: cfg.Data, OpenMetrics: cfg.OpenMetrics, SessionIdle: cfg.SessionIdle,
		NodesUnauthenticated: cfg.InsecureCluster, Network: cfg.Network, NotifyKey: notifyKey, NotifyEgress: notifyEgress,
		NotifyWake: deliverer.Wake, NotifyTester: channels,
		Chain: site.ChainSource{Kind: string(cfg.Chain.Kind), Host: cfg.Chain.Host(), Network: string(cfg.Network),
			ThirdParty: cfg.Chain.ThirdParty(), Tor: cfg.ChainProxy != nil}})
	public, err := serve(cfg.HTTP, publicTLS, api.NewHTTPServer("addrwatch", api.PublicHandler()))
	if err != nil {
		return err
	}
	defer shutdown(public)
	admin, err := serve(cfg.Admin, nil, api.NewAdminHTTPServer("addrwatch-admin", api.AdminHandler()))
	if err != nil {
		return err
	}
	defer shutdown(admin)
	// Requests other nodes forward arrive over node connections.
	forwardedPublic := api.NewNodeHTTPServer("addrwatch", api.ForwardedPublicHandler(), false)
	go forwardedPublic.Serve(store.forwarded(cluster.ForwardPublic))
	defer shutdown(forwardedPublic.Server)
	framed := api.NewFramedServer()
	go framed.Serve(store.forwarded(cluster.ForwardFrames))
	defer framed.Close()
	forwardedAdmin := api.NewNodeHTTPServer("addrwatch-admin", api.ForwardedAdminHandler(), true)
	go forwardedAdmin.Serve(store.forwarded(cluster.ForwardAdmin))
	defer shutdown(forwardedAdmin.Server)
	logger.Info("addrwatchd serving", "http", cfg.HTTP, "https", publicTLS != nil, "admin", cfg.Admin, "raft", cfg.Raft, "node_id", cfg.NodeID, "data", cfg.Data, "groups", max(cfg.Groups, 1))

	if cfg.Demo {
		if err := runDemo(ctx, cfg, api, demo, stdout); err != nil {
			logger.Error("demo setup failed", "err", err)
		}
	}
	<-ctx.Done()
	logger.Info("shutting down")
	return nil
}

// shutdownGrace bounds how long a stopping server waits for requests in
// flight; idle keep-alive connections are not worth waiting for.
const shutdownGrace = 5 * time.Second

func shutdown(srv *fasthttp.Server) {
	ctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	srv.ShutdownWithContext(ctx)
}

// serve starts srv on addr, over TLS when tlsConfig is set, and returns
// once it is listening.
func serve(addr string, tlsConfig *tls.Config, srv *edge.Server) (*fasthttp.Server, error) {
	ln, err := listen(addr, tlsConfig)
	if err != nil {
		return nil, err
	}
	go srv.Serve(ln)
	return srv.Server, nil
}
