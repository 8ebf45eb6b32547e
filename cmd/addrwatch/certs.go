package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/addrwatch/addrwatch/cluster/nodecert"
)

var clusterCertsCommand = &command{
	words:    []string{"cluster", "certs"},
	synopsis: "--out DIR --nodes ID[,ID...] [--hosts ID=HOST,...]",
	summary:  "make the cluster CA and node certificates for mutual TLS between nodes",
	details: `Make, offline, the certificates nodes prove themselves to each other with
(addrwatchd --cluster-ca, --cluster-cert, --cluster-key): a cluster CA
(DIR/ca.crt, DIR/ca.key) and, for each node ID, DIR/ID.crt and DIR/ID.key,
each certificate good for both ends of a node connection. A node accepts a
connection only from a peer with a certificate from the cluster CA.

DIR is created 0700 and every file 0600. An existing file is never
overwritten. A CA already in DIR signs the new certificates, so a node can
be added later: run the command again with the new ID only. To renew a
node's certificate, move its two files away first.

Every certificate names node.addrwatch.internal, the name nodes check each
other against (raft dials nodes by address, which may change), and the node
ID; --hosts adds host names or IP addresses to a node's certificate, for
other tools that check them.

A node started without --cluster-ca, --cluster-cert and --cluster-key keeps
a CA of its own in DATA/cluster-tls, in this layout: --out DATA/cluster-tls
makes certificates of that CA, for nodes to join that node's cluster.

Copy to each node its own ID.crt and ID.key and the CA's ca.crt; keep ca.key
on the machine that makes certificates, not on the nodes. Anyone with a
node's key, or the CA key, can act as a node: rewrite the raft log and use
the admin API.`,
	example: "addrwatch cluster certs --out ./certs --nodes n1,n2,n3 --hosts n1=10.0.0.5,n2=10.0.0.6,n3=10.0.0.7",
	api:     offline,
	define: func(fs *flag.FlagSet) action {
		out := fs.String("out", "", "`DIR` for the CA and the certificates (created 0700)")
		nodes := fs.String("nodes", "", "comma-separated node `IDs`, as given to addrwatchd --node-id")
		hosts := fs.String("hosts", "", "comma-separated `ID=HOST` pairs: a host name or IP address to add to node ID's certificate (repeat an ID for several)")
		return func(_ context.Context, a *app, _ []string) error {
			if *out == "" {
				return usagef("--out is required")
			}
			want, err := parseCertNodes(*nodes, *hosts)
			if err != nil {
				return err
			}
			issued, err := nodecert.Issue(*out, want)
			if err != nil {
				return err
			}
			return reportCerts(a, *out, want, issued)
		}
	},
}

// parseCertNodes turns --nodes and --hosts into the nodes to certify.
func parseCertNodes(nodes, hosts string) ([]nodecert.Node, error) {
	var want []nodecert.Node
	index := map[string]int{}
	for _, id := range strings.Split(nodes, ",") {
		if id = strings.TrimSpace(id); id == "" {
			continue
		}
		index[id] = len(want)
		want = append(want, nodecert.Node{ID: id})
	}
	if len(want) == 0 {
		return nil, usagef("--nodes is required: the node IDs to make certificates for")
	}
	for _, pair := range strings.Split(hosts, ",") {
		if pair = strings.TrimSpace(pair); pair == "" {
			continue
		}
		id, host, found := strings.Cut(pair, "=")
		i, known := index[id]
		if !found || host == "" {
			return nil, usagef("--hosts takes ID=HOST pairs, got %q", pair)
		}
		if !known {
			return nil, usagef("--hosts names %q, which is not in --nodes", id)
		}
		want[i].Hosts = append(want[i].Hosts, host)
	}
	return want, nil
}

func reportCerts(a *app, dir string, nodes []nodecert.Node, issued nodecert.Issued) error {
	if a.globals.json {
		out, err := json.Marshal(map[string]any{"ca_created": issued.CACreated, "files": issued.Files})
		if err != nil {
			return err
		}
		return printRaw(a.stdout, out)
	}
	w := a.stdout
	ca := filepath.Join(dir, nodecert.CAFile)
	if issued.CACreated {
		fmt.Fprintf(w, "made a new cluster CA: %s (its key %s stays here, not on the nodes)\n", ca, filepath.Join(dir, nodecert.CAKeyFile))
	} else {
		fmt.Fprintf(w, "signed with the cluster CA already in %s\n", dir)
	}
	fmt.Fprintln(w, "Start each node with its own files:")
	for _, n := range nodes {
		fmt.Fprintf(w, "  %s: addrwatchd --node-id %s --cluster-ca %s --cluster-cert %s --cluster-key %s ...\n",
			n.ID, n.ID, ca, filepath.Join(dir, nodecert.CertFile(n.ID)), filepath.Join(dir, nodecert.KeyFile(n.ID)))
	}
	return nil
}
