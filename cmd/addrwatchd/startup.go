package main

import (
	"errors"
	"fmt"

	"github.com/addrwatch/addrwatch/persistence"
)

// explainOpenError adds the ways back to an error that keeps the node
// from opening its data dir, where the flags to use are this binary's.
func explainOpenError(err error) error {
	var corrupt *persistence.CorruptError
	if errors.As(err, &corrupt) {
		return fmt.Errorf("%w. Ways back: put back a copy of the data dir from a backup; or, on a cluster whose other nodes hold the data, empty this node's data dir and start it with --join under the same --node-id and --raft (docs/operators.md, \"When a node will not start\"); or move %s aside and start with --recover-from-snapshot, which starts from the newest snapshot and loses every write after it", err, corrupt.Path)
	}
	return err
}
