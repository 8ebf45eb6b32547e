package main

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/addrwatch/addrwatch/cluster"
)

// certExpiryWarning is how long before its node certificate expires a node
// starts warning at every start.
const certExpiryWarning = 30 * 24 * time.Hour

// loadNodeTLS loads the --cluster-* files when given, or else the data
// dir's own (owntls.go), unless --insecure-cluster gives up TLS; it says in
// the log how node-to-node traffic is protected, and what is given up when
// it is not.
func loadNodeTLS(cfg config, logger *slog.Logger) (*cluster.NodeTLS, error) {
	if cfg.InsecureCluster {
		logger.Warn("--insecure-cluster: node-to-node traffic is plain, unauthenticated TCP; anyone who can reach the raft port, on this machine too, can rewrite the raft log, install a snapshot and act as any node",
			"raft", cfg.Raft)
		return nil, nil
	}
	if cfg.ClusterTLS == nil {
		nodeTLS, err := ownNodeTLS(cfg, logger)
		if err != nil {
			return nil, err
		}
		logger.Info("node-to-node traffic is mutual TLS with this data dir's own cluster CA: only nodes with a certificate from it are accepted, on loopback too",
			"raft", cfg.Raft, "cluster_tls", filepath.Join(cfg.Data, ownCertsDir), "cert_expires", nodeTLS.Expires.UTC().Format(time.DateOnly))
		warnExpiry(logger, nodeTLS, filepath.Join(cfg.Data, ownCertsDir))
		return nodeTLS, nil
	}
	files := cfg.ClusterTLS
	nodeTLS, err := cluster.LoadNodeTLS(files.CA, files.Cert, files.Key)
	if err != nil {
		return nil, fmt.Errorf("--cluster-ca/--cluster-cert/--cluster-key: %w", err)
	}
	logger.Info("node-to-node traffic is mutual TLS: only nodes with a certificate from the cluster CA are accepted",
		"raft", cfg.Raft, "cluster_ca", files.CA, "cluster_cert", files.Cert, "cert_expires", nodeTLS.Expires.UTC().Format(time.DateOnly))
	warnExpiry(logger, nodeTLS, files.Cert)
	if info, err := os.Stat(files.Key); err == nil && info.Mode().Perm()&0o077 != 0 {
		logger.Warn("--cluster-key is readable by other users; whoever reads it can act as a node: chmod 600 it",
			"cluster_key", files.Key, "mode", fmt.Sprintf("%#o", info.Mode().Perm()))
	}
	return nodeTLS, nil
}

// warnExpiry warns at every start once the node's certificate is close to
// expiring.
func warnExpiry(logger *slog.Logger, nodeTLS *cluster.NodeTLS, cert string) {
	if left := time.Until(nodeTLS.Expires); left < certExpiryWarning {
		logger.Warn("this node's certificate expires soon; give it a new one from the cluster CA (addrwatch cluster certs) before other nodes refuse it",
			"cluster_cert", cert, "cert_expires", nodeTLS.Expires.UTC().Format(time.RFC3339))
	}
}
