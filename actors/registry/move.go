package registry

import (
	"slices"
	"time"

	"github.com/addrwatch/addrwatch/actors"
)

// Moving accounts between registries: a sharded cluster moves a slot's
// accounts from one raft group to another (cluster/slotmove.go). The
// source's accounts are read where they are (Export), installed whole in
// the destination through its log (Install), and dropped from the source
// (Remove). Install and Remove run on the apply goroutine, like
// ApplyBatch.

// IDs returns the IDs of the accounts keep accepts, in ID order.
func (r *Registry) IDs(keep func(id string) bool) []string {
	r.mu.RLock()
	var ids []string
	for id := range r.accounts {
		if keep(id) {
			ids = append(ids, id)
		}
	}
	r.mu.RUnlock()
	slices.Sort(ids)
	return ids
}

// Has reports whether the registry holds the account id.
func (r *Registry) Has(id string) bool { return r.pid(id) != nil }

// Export runs encode inside the actor of each account of ids, in order,
// and returns what it made. An account that is gone is skipped.
func (r *Registry) Export(ids []string, encode func(a *actors.Account) ([]byte, error), timeout time.Duration) ([][]byte, error) {
	var out [][]byte
	err := r.visitIDs(ids, func(a *actors.Account) (*actors.Account, error) {
		b, err := encode(a)
		out = append(out, b)
		return a, err
	}, timeout)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Install adds accounts, each replacing any account of the same ID, and
// takes their logins into the login index.
func (r *Registry) Install(accounts []*actors.Account) {
	for _, a := range accounts {
		acct := r.spawn(a)
		r.mu.Lock()
		old := r.accounts[a.ID]
		r.accounts[a.ID] = acct
		r.mu.Unlock()
		if old != nil {
			r.system.Root.Stop(old.pid)
		}
		r.logins.settle(a.ID, a.Login, false)
	}
}

// Remove drops the accounts of ids and their logins.
func (r *Registry) Remove(ids []string) {
	for _, id := range ids {
		r.remove(id)
		r.logins.settle(id, "", true)
	}
}
