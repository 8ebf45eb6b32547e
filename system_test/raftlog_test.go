package system_test

import (
	"strings"
	"testing"
)

// raftLogs are the log stores the restart, crash and start-check tests
// run on: the WAL, which new data dirs get, and bolt, which data dirs
// made before it keep.
var raftLogs = []string{"wal", "bolt"}

// startOnRaftLog starts a server on a new data dir with --raft-log store
// and checks that it says it uses that store. Restarts need not repeat
// the flag: a data dir keeps the store it has.
func startOnRaftLog(t *testing.T, store string) *server {
	t.Helper()
	s := startServer(t, "--raft-log", store)
	s.expectRaftLog(store)
	return s
}

// expectRaftLog fails unless the server's last start logged that it uses
// store.
func (s *server) expectRaftLog(store string) {
	s.t.Helper()
	if out := s.logs.String(); !strings.Contains(out, `msg="raft log: `+store+" ") {
		s.t.Fatalf("the server does not say it uses the %s raft log; output:\n%s", store, out)
	}
}
