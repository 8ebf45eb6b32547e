package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/addrwatch/addrwatch/chain"
	"github.com/addrwatch/addrwatch/chain/btcdsource"
	"github.com/addrwatch/addrwatch/chain/electrum"
)

// networkCheckTimeout bounds the start's question to the chain source:
// which chain are you on?
const networkCheckTimeout = 15 * time.Second

// openChain opens the chain source --chain names, reached as --chain-cert
// and --chain-proxy say, and checks that it follows --network's chain: a
// source on another chain is refused; one that does not answer is
// started with, and a warning (History is degraded until it answers).
func openChain(ctx context.Context, cfg config, logger *slog.Logger) (src chain.Source, closeSource func(), err error) {
	reach := chain.Reach{Proxy: cfg.ChainProxy}
	if cfg.ChainCert != "" {
		pem, err := os.ReadFile(cfg.ChainCert)
		if err != nil {
			return nil, nil, fmt.Errorf("--chain-cert: %w", err)
		}
		reach.CertPEM = pem
	}
	closeSource = func() {}
	switch cfg.Chain.Kind {
	case chain.SourceSim:
		return chain.NewSimSource(chain.NewSim(nil), chain.ClientOptions{}), closeSource, nil
	case chain.SourceEsplora:
		c, err := chain.NewClient(cfg.Chain.URL.String(), chain.ClientOptions{Reach: reach})
		if err != nil {
			return nil, nil, fmt.Errorf("--chain: %w", err)
		}
		src = c
	case chain.SourceBtcd:
		opts := btcdsource.Options{Network: cfg.Network, Cert: reach.CertPEM}
		if cfg.ChainProxy != nil {
			opts.Proxy = cfg.ChainProxy.String()
		}
		b, err := btcdsource.Open(cfg.Chain, opts)
		if err != nil {
			return nil, nil, fmt.Errorf("--chain: %w", err)
		}
		src, closeSource = chain.Guard(b, 0, 0), func() { b.Close() }
	case chain.SourceElectrum:
		e, err := electrum.Open(cfg.Chain, reach, electrum.Options{Network: cfg.Network})
		if err != nil {
			return nil, nil, fmt.Errorf("--chain: %w", err)
		}
		src, closeSource = chain.Guard(e, 0, 0), func() { e.Close() }
	default:
		return nil, nil, fmt.Errorf("--chain: %s: is no chain source this build reads", cfg.Chain.Kind)
	}
	if cfg.Chain.ThirdParty() {
		logger.Warn("the chain source is not on this machine or its network: unless it is your own server, its operator learns every address your owners watch and when they look; run your own node (btcd:, electrum:) or reach it through Tor (--chain-proxy)",
			"chain", cfg.Chain.String())
	}
	check, cancel := context.WithTimeout(ctx, networkCheckTimeout)
	defer cancel()
	switch err := chain.CheckNetwork(check, src, cfg.Network); {
	case errors.Is(err, chain.ErrWrongNetwork):
		closeSource()
		return nil, nil, fmt.Errorf("--chain %s: %w (--network is %s)", cfg.Chain, err, cfg.Network)
	case err != nil:
		logger.Warn("the chain source did not say which network it is on; History stays degraded until it answers", "chain", cfg.Chain.String(), "err", err)
	default:
		logger.Info("chain source", "chain", cfg.Chain.String(), "network", string(cfg.Network))
	}
	return src, closeSource, nil
}
