package httpd

import (
	"context"

	"github.com/addrwatch/addrwatch/actors"
)

// Store is what the API needs from the node. Its answers have one error
// channel: a rule's refusal is the *actors.Error returned (found with
// errors.As), a condition of the cluster one of package clustererr's
// (errors.Is), and specError (errors.go) turns either into what the
// client is told.
type Store interface {
	// Propose replicates cmd and returns its result once applied. It
	// returns an error wrapping clustererr.ErrNotLeader when the command
	// never entered the log, or clustererr.ErrOutcomeUnknown when it may or
	// may not have applied.
	Propose(ctx context.Context, cmd *actors.Command) (actors.Result, error)
	// Query authenticates cred on its account and runs q on applied state,
	// as fresh as rc asks. The handlers ask through s.query and ask
	// (request.go), which also note what the query proved.
	Query(ctx context.Context, cred actors.Credential, q actors.Query, rc ReadConsistency) (actors.Result, error)
	// AccountForLogin returns the account whose login is login, compared
	// without regard to case, in applied state (sign-in runs on the leader).
	AccountForLogin(login string) (accountID string, found bool)
}

// ReadConsistency is how fresh a read's state must be.
type ReadConsistency uint8

const (
	// ReadLeader answers from the leader's applied state. raft's leader
	// steps down when it loses its quorum for longer than its lease, so a
	// stale answer is possible only in that short window
	// (cluster/DESIGN.md, "Reads").
	ReadLeader ReadConsistency = iota
	// ReadLinearizable has the leader confirm with a quorum that it still
	// leads before it answers.
	ReadLinearizable
)

// bodyOf is a successful result's body as a T: a query's answer, or the
// view a command answers with. A body of another type is a programmer
// error, answered as an internal error rather than a panic.
func bodyOf[T any](res actors.Result) (T, error) {
	return actors.Answer[T](res, nil)
}
