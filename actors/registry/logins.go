package registry

import (
	"sync"

	"github.com/addrwatch/addrwatch/actors"
)

// Logins are unique across accounts, but the registry applies a batch's
// accounts in parallel, each in its own actor, and raft may cut the same
// log into different batches on different replicas. So the registry keeps
// one index of the logins in use, and the commands that read it (an
// account creation with a login, SetLogin: actors.LoginClaim) are barriers
// in ApplyBatch: everything before one in the log is applied and its
// effect on the index recorded before the barrier learns whether its login
// is taken (actors.MarkLoginTaken). That way every replica answers each
// barrier from the index as it stood at the barrier's place in the log,
// however the batches were cut.
//
// The index is settled after every run of commands from the accounts'
// logins as their actors report them, so a deletion (which frees its
// login) needs no barrier of its own: no command reads the index before
// the next barrier, and the barrier starts after the deletion is settled.
//
// The index is derived state: a snapshot carries each account's Login,
// and Restore rebuilds the index from them.

// loginIndex maps each login in use, folded (actors.FoldLogin), to its
// account. The apply goroutine writes it; sign-ins read it concurrently.
type loginIndex struct {
	mu        sync.RWMutex
	byLogin   map[string]string // folded login → account id
	byAccount map[string]string // account id → folded login
}

func newLoginIndex() *loginIndex {
	return &loginIndex{byLogin: map[string]string{}, byAccount: map[string]string{}}
}

// account returns the account whose login is login, compared without
// regard to case. A login that is not valid names no account.
func (x *loginIndex) account(login string) (string, bool) {
	if actors.ValidateLogin(login) != nil {
		return "", false
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	id, found := x.byLogin[actors.FoldLogin(login)]
	return id, found
}

// takenByOther reports whether an account other than accountID holds
// login. An account may take its own login again in another case.
func (x *loginIndex) takenByOther(login, accountID string) bool {
	x.mu.RLock()
	defer x.mu.RUnlock()
	holder, found := x.byLogin[actors.FoldLogin(login)]
	return found && holder != accountID
}

// settle records an account's login after its commands were applied:
// login is its Login, and gone says the account no longer exists.
func (x *loginIndex) settle(accountID, login string, gone bool) {
	folded := actors.FoldLogin(login)
	if gone {
		folded = ""
	}
	x.mu.RLock()
	unchanged := x.byAccount[accountID] == folded
	x.mu.RUnlock()
	if unchanged {
		return
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if old, found := x.byAccount[accountID]; found {
		delete(x.byLogin, old)
		delete(x.byAccount, accountID)
	}
	if _, held := x.byLogin[folded]; folded != "" && !held {
		x.byLogin[folded] = accountID
		x.byAccount[accountID] = folded
	}
}

// rebuild replaces the index with the logins of accounts. Two accounts
// with one login cannot come out of apply; should a snapshot hold them,
// the first in the given (snapshot) order keeps it, on every replica
// alike, and the others are returned for the caller to report.
func (x *loginIndex) rebuild(accounts []*actors.Account) (clashes []string) {
	byLogin, byAccount := map[string]string{}, map[string]string{}
	for _, a := range accounts {
		if a.Login == "" {
			continue
		}
		folded := actors.FoldLogin(a.Login)
		if _, held := byLogin[folded]; held {
			clashes = append(clashes, a.ID)
			continue
		}
		byLogin[folded], byAccount[a.ID] = a.ID, folded
	}
	x.mu.Lock()
	x.byLogin, x.byAccount = byLogin, byAccount
	x.mu.Unlock()
	return clashes
}

// applyInRuns applies cmds in runs that each begin at a barrier (a command
// that reads the login index): before a run, its barrier learns from the
// index whether its login is taken; apply runs the run's accounts in
// parallel and settles the index from their logins.
func (r *Registry) applyInRuns(cmds []*actors.Command, results []actors.Result, apply func(cmds []*actors.Command, results []actors.Result)) {
	for start := 0; start < len(cmds); {
		end := start + 1
		for end < len(cmds) && !claimsLogin(cmds[end]) {
			end++
		}
		if login, claims := actors.LoginClaim(cmds[start]); claims {
			actors.MarkLoginTaken(cmds[start], r.logins.takenByOther(login, cmds[start].Account))
		}
		apply(cmds[start:end], results[start:end])
		start = end
	}
}

// claimsLogin reports whether c is a barrier: a command that reads the
// login index (actors.LoginClaim).
func claimsLogin(c *actors.Command) bool {
	_, claims := actors.LoginClaim(c)
	return claims
}

// AccountForLogin returns the account whose login is login, compared
// without regard to case, as of the commands applied so far.
func (r *Registry) AccountForLogin(login string) (accountID string, found bool) {
	return r.logins.account(login)
}
