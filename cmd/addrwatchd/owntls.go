package main

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/addrwatch/addrwatch/cluster"
	"github.com/addrwatch/addrwatch/cluster/nodecert"
	"github.com/addrwatch/addrwatch/persistence"
)

// ownCertsDir is where, in its data dir, a node started without the
// --cluster-* flags keeps its cluster CA and its node certificate, in the
// layout addrwatch cluster certs --out writes: running that command with
// --out DATA/cluster-tls mints a certificate for another node of the same
// cluster.
const ownCertsDir = "cluster-tls"

// ownNodeTLS is a node's mutual TLS when no --cluster-* flags are given:
// from the CA and certificate in DATA/cluster-tls, made at the first start
// (of a new data dir, or of one an older release made, which had none).
// So a one-node server on loopback accepts no plain node connection: any
// local process could otherwise open its raft port, speak a node stream
// and use the admin API without a token.
//
// A CA made here is known to no other node, so it is made only for a node
// that is alone; a data dir that already holds a CA keeps using it, with
// peers too (they got their certificates from it).
func ownNodeTLS(cfg config, logger *slog.Logger) (*cluster.NodeTLS, error) {
	dir := filepath.Join(cfg.Data, ownCertsDir)
	ca := filepath.Join(dir, nodecert.CAFile)
	cert, key := filepath.Join(dir, nodecert.CertFile(cfg.NodeID)), filepath.Join(dir, nodecert.KeyFile(cfg.NodeID))
	switch {
	case !exists(ca):
		if err := checkAlone(cfg, logger); err != nil {
			return nil, err
		}
		if _, err := nodecert.Issue(dir, []nodecert.Node{{ID: cfg.NodeID}}); err != nil {
			return nil, fmt.Errorf("make this data dir's cluster CA: %w", err)
		}
		logger.Info("made a cluster CA and a node certificate for this data dir; 'addrwatch cluster certs --out DIR --nodes ID' makes certificates of the same CA for more nodes",
			"dir", dir)
	case !exists(cert) && exists(filepath.Join(dir, nodecert.CAKeyFile)):
		// A node id this data dir's CA has not certified yet.
		if _, err := nodecert.Issue(dir, []nodecert.Node{{ID: cfg.NodeID}}); err != nil {
			return nil, fmt.Errorf("certify %s with this data dir's cluster CA: %w", cfg.NodeID, err)
		}
	}
	if err := makePrivate(dir, logger); err != nil {
		return nil, err
	}
	nodeTLS, err := cluster.LoadNodeTLS(ca, cert, key)
	if err != nil {
		return nil, fmt.Errorf("%s: %w (or give --cluster-ca, --cluster-cert and --cluster-key)", dir, err)
	}
	return nodeTLS, nil
}

// checkAlone refuses to make a CA for a node that has, or will have,
// peers: --peers names other nodes, --join waits to be added, or the data
// dir's raft configuration lists other servers. Each node would make a CA
// of its own, and no two would accept each other.
func checkAlone(cfg config, logger *slog.Logger) error {
	var peers []string
	for _, p := range cfg.Peers {
		if p.ID != cfg.NodeID {
			peers = append(peers, p.ID)
		}
	}
	why := ""
	switch {
	case len(peers) > 0:
		why = "--peers names " + strings.Join(peers, ", ")
	case cfg.Join:
		why = "--join waits to be added to a cluster"
	default:
		others, err := cluster.OtherServers(cfg.Data, cfg.NodeID, logger)
		if err != nil {
			return err
		}
		if len(others) == 0 {
			return nil
		}
		slices.Sort(others)
		why = "its data dir's raft configuration lists " + strings.Join(others, ", ")
	}
	return fmt.Errorf("this node has peers (%s), and nodes must prove themselves to each other with certificates of one cluster CA: "+
		"make them with 'addrwatch cluster certs --out DIR --nodes ID,...' and start every node with --cluster-ca, --cluster-cert and --cluster-key; "+
		"or, to grow a cluster whose first node made its own CA in its data dir, run 'addrwatch cluster certs --out FIRST_DATA/%s --nodes ID' "+
		"and give the new node its files the same way; "+
		"or --insecure-cluster (labs only: any process that can reach the raft port, on this machine too, can then act as a node)", why, ownCertsDir)
}

// makePrivate makes dir 0700 and every file in it 0600, as the rest of a
// data dir is made at every start, and warns when they were open to
// others: whoever read a key there may act as a node.
func makePrivate(dir string, logger *slog.Logger) error {
	var open []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.Type()&fs.ModeSymlink != 0 {
			return err // a link has no mode of its own, and TightenModes leaves it
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if info.Mode().Perm()&0o077 != 0 {
			open = append(open, fmt.Sprintf("%s (%#o)", path, info.Mode().Perm()))
		}
		return nil
	})
	if err != nil || len(open) == 0 {
		return err
	}
	logger.Warn("the data dir's cluster certificates were open to other users; made them private. Whoever read a key there can act as a node: if that may have happened, move the directory away (a node without peers then makes a new CA; give the other nodes of a cluster new certificates)",
		"dir", dir, "open", strings.Join(open, ", "))
	return persistence.TightenModes(dir)
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return !errors.Is(err, fs.ErrNotExist)
}
