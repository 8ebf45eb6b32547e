package cluster

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/addrwatch/addrwatch/persistence"
)

// OtherServers lists the servers other than nodeID in the raft
// configuration dataDir holds: the one the node would start with (of the
// meta group, in a sharded node's data dir, which every node of the
// cluster joins). A new data dir, with no log store yet, holds none; it is
// left without one, so that --raft-log still chooses its store.
//
// addrwatchd asks before it gives a data dir of an older release its own
// cluster CA: a node that already has peers must not make a CA they do not
// know.
func OtherServers(dataDir, nodeID string, log *slog.Logger) ([]string, error) {
	dir := dataDir
	if isSharded(dataDir) {
		dir = metaDir(dataDir)
	}
	hasStore := false
	for _, name := range []string{persistence.WALDir, persistence.BoltFile} {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			hasStore = true
		}
	}
	if !hasStore {
		return nil, nil
	}
	stores, err := persistence.OpenStores(dir, persistence.LogWAL, newRaftLogger(log))
	if err != nil {
		return nil, fmt.Errorf("cluster: read the raft configuration of %s: %w", dir, err)
	}
	defer stores.Close()
	c, err := latestConfiguration(stores)
	if err != nil {
		return nil, err
	}
	var others []string
	for _, s := range c.Servers {
		if string(s.ID) != nodeID {
			others = append(others, string(s.ID))
		}
	}
	return others, nil
}
