package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/addrwatch/addrwatch/persistence"
)

// migrateLogCommand converts a stopped node's raft log from bolt (raft.db)
// to the WAL. Like cluster recover it works on the data dir itself, not
// over HTTP: the node must be stopped, so there is no server to ask.
var migrateLogCommand = &command{
	words:    []string{"migrate-log"},
	synopsis: "--data DIR",
	summary:  "move a stopped node's raft log from raft.db (bolt) to the WAL",
	details: `Copy the raft log and stable store of a stopped node from <data>/raft.db
(raft-boltdb) to a new WAL in <data>/wal (raft-wal). Every entry and key is
copied into <data>/wal.migrating, read back and compared with raft.db, and
only then is it renamed to <data>/wal and raft.db renamed to
raft.db.migrated-<time>, which is kept as a backup: delete it once the node
runs on the WAL. A run that is interrupted leaves raft.db as it was (the
node still starts on it) and a wal.migrating that the next run redoes.

The command refuses a data dir without raft.db, one in use (stop the node
first) and one that already has a wal directory. Move a cluster over one
node at a time, waiting after each start until 'addrwatch cluster status'
shows the node caught up (docs/operators.md, "Move a data dir to the WAL").`,
	example: "addrwatch migrate-log --data /var/lib/addrwatch",
	api:     localData,
	define: func(*flag.FlagSet) action {
		return func(_ context.Context, a *app, _ []string) error {
			dir := firstSet(a.globals.data, a.getenv("ADDRWATCH_DATA"))
			if dir == "" {
				return usagef("--data is required: the stopped node's data directory")
			}
			return migrateLog(a, dir)
		}
	},
}

// migrateLogStep is how often, in entries copied, a progress line is
// printed: raft-wal appends a batch per call, so a line per batch would
// flood the terminal on a log of millions of entries.
const migrateLogStep = 100_000

func migrateLog(a *app, dir string) error {
	var copied, total uint64
	var nextLine uint64
	err := persistence.MigrateBoltToWAL(dir, func(done, all uint64) {
		copied, total = done, all
		if done >= nextLine || done == all {
			fmt.Fprintf(a.stdout, "copied %d of %d entries\n", done, all)
			nextLine = done + migrateLogStep
		}
	})
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(a.stdout, "migrated %s to the WAL: %d of %d entries and the stable store copied and checked\n"+
		"  log:    %s/wal\n  backup: %s/raft.db.migrated-* (delete it once the node runs on the WAL)\n"+
		"Start the node as before; it now uses the WAL.\n", dir, copied, total, dir, dir)
	return err
}
