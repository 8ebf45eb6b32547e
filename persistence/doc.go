// Package persistence owns the bytes on disk: the versioned encodings of
// log entries (batches of commands) and of snapshots, and the wiring of
// the log and stable store and raft's file snapshot store. The log store
// is raft-wal (walstore.go, the default for a new data dir) or
// raft-boltdb (raft.db); a data dir keeps the one it has (logchoice.go).
// Around them: the data dir kept private (modes.go) and locked against a
// second process (lock_unix.go), and each store's bolt file read through
// before it is opened, so that a damaged file is an error rather than a
// crash (boltcheck.go); a checksum on every entry (entrysum.go); and the
// data dir's record of how far its log reaches (record.go), which the
// start checks in cluster compare with the stores. It knows nothing of
// raft's control flow.
//
// A log entry is one format byte, a command count, then per command its
// kind byte and a length-prefixed JSON body. A decoder that meets an
// unknown format or kind returns an error: the caller must stop the node
// rather than skip an entry and diverge from its peers.
package persistence
