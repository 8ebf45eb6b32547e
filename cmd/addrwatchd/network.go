package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/addrwatch/addrwatch/chain"
	"github.com/addrwatch/addrwatch/persistence"
)

// networkFile records, in the data dir, the Bitcoin network it was made
// for. Every address its accounts hold and every fact its log records of
// the chain belong to that network, so a start with another --network is
// refused rather than showing a mainnet address as empty or following
// another chain.
const networkFile = "network"

// fixNetwork records n in a new (empty) data dir, and refuses a data dir
// made for another network. A data dir that holds anything but has no
// record was made before networks were recorded, on mainnet; it gets its
// record now.
func fixNetwork(dataDir string, n chain.Network) error {
	path := filepath.Join(dataDir, networkFile)
	b, err := os.ReadFile(path)
	switch {
	case err == nil:
		recorded, perr := chain.ParseNetwork(strings.TrimSpace(string(b)))
		if perr != nil {
			return fmt.Errorf("%s does not name a network (%v): restore it, or move the data dir aside", path, perr)
		}
		if recorded != n {
			return fmt.Errorf("the data dir %s was made for %s, not %s: start with --network %s, or give another --data", dataDir, recorded, n, recorded)
		}
		return persistence.TightenModes(path) // an older build's or a careless copy's 0644

	case !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("data dir: %w", err)
	}
	entries, err := os.ReadDir(dataDir)
	if err != nil {
		return fmt.Errorf("data dir: %w", err)
	}
	recorded := n
	if len(entries) > 0 {
		recorded = chain.Mainnet
	}
	if recorded != n {
		return fmt.Errorf("the data dir %s was made before networks were recorded, so on mainnet, not %s: start with --network mainnet, or give another --data", dataDir, n)
	}
	if err := persistence.WriteFileSynced(path, []byte(string(n)+"\n")); err != nil {
		return fmt.Errorf("data dir: %w", err)
	}
	return nil
}
