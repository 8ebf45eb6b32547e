package persistence

import (
	"fmt"

	"github.com/hashicorp/raft"
)

// WrapLog puts wrap's store (the log verifier) between the log store and
// the cache of recent entries, so every entry raft appends passes through
// it on its way to the disk while the cache still serves recent entries
// from memory. It must be called before raft opens the stores. Closing
// the stores still closes only the underlying store: the wrapper's own
// resources are its maker's to release.
func (s *Stores) WrapLog(wrap func(raft.LogStore) raft.LogStore) error {
	logs, err := raft.NewLogCache(logCacheEntries, wrap(s.raw))
	if err != nil {
		return fmt.Errorf("persistence: log cache: %w", err)
	}
	s.Log = logs
	return nil
}
