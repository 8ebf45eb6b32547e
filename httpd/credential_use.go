package httpd

import (
	"context"
	"sync"
	"time"

	"github.com/addrwatch/addrwatch/actors"
)

// Recording the use of credentials. The owner's API access panel shows
// when each key was last used, and a session ends after an idle time
// unless it is used. Both live in the replicated state, so recording a use
// is a raft write; doing one per request would turn every agent read into
// a write. So the edge records a use only when the recorded one is a grain
// old, in the background after the request, one at a time per credential
// on this node (the leader, which serves authenticated requests).
const (
	// keyLastUsedGrain is how stale a key's recorded last use may be: a
	// use is recorded when the recorded one is at least this old, so an
	// agent's steady traffic costs at most one raft write a minute per key.
	keyLastUsedGrain = time.Minute
	// sessionExtendSlice is how much of the idle window a session may use
	// up before a use extends it again: at most one raft write a minute
	// per active session.
	sessionExtendSlice = time.Minute
	// SessionIdleDefault is how long an unused session lives on.
	SessionIdleDefault = 30 * time.Minute
	// SessionLifetime is the cap on a session's whole life.
	SessionLifetime = sessionLifetime
	// credentialTouchTimeout bounds one background record (its query and
	// its proposal).
	credentialTouchTimeout = 10 * time.Second
	// credentialTouchesMax bounds the records in flight on a node; a use
	// that finds them all busy is recorded on a later request.
	credentialTouchesMax = 64
	// credentialUsesMax bounds the credentials this node remembers the
	// next due record of; past it, the ones not due are forgotten first.
	credentialUsesMax = 100_000
)

// credentialUse proposes TouchKey and TouchSession when a use is due.
type credentialUse struct {
	store Store // its own queries are not uses (they bypass s.query)
	now   func() time.Time
	idle  time.Duration

	mu       sync.Mutex
	due      map[credentialRef]int64 // no record is due before this time (Unix ns)
	inFlight map[credentialRef]bool
	touches  sync.WaitGroup // tests wait for the records in flight
}

// credentialRef names a credential without its secret.
type credentialRef struct {
	kind    actors.CredentialKind
	account string
	id      string
}

func newCredentialUse(store Store, now func() time.Time, idle time.Duration) *credentialUse {
	if idle <= 0 {
		idle = SessionIdleDefault
	}
	return &credentialUse{store: store, now: now, idle: idle, due: map[credentialRef]int64{}, inFlight: map[credentialRef]bool{}}
}

// sessionEnds returns when a session signed in at now ends if it is not
// used, and the latest it may ever end.
func (u *credentialUse) sessionEnds(now time.Time) (expiresAt, expiresAtMax int64) {
	return now.Add(min(u.idle, sessionLifetime)).UnixNano(), now.Add(sessionLifetime).UnixNano()
}

// used notes that cred authenticated a request. It returns at once; a due
// record is made in the background, with the time of this use (the clock
// is read here, on the request's goroutine, and nowhere else). It returns
// the time before which no use of cred is due to be recorded, as far as it
// knows (0: it does not), which only ever moves later: the next record
// after a record is made at least a grain or a slice after it, and one
// forgotten (forgetNotDue) would find nothing to record that early.
func (u *credentialUse) used(cred actors.Credential) (notBefore int64) {
	if cred.Kind != actors.CredentialAPIKey && cred.Kind != actors.CredentialSession {
		return 0
	}
	ref := credentialRef{kind: cred.Kind, account: cred.AccountID, id: cred.ID}
	now := cred.Now // the request's time, when the edge parsed the credential
	if now == 0 {
		now = u.now().UnixNano()
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.inFlight[ref] {
		return 0
	}
	if due := u.due[ref]; now < due {
		return due
	}
	if len(u.inFlight) >= credentialTouchesMax {
		return 0
	}
	u.inFlight[ref] = true
	u.touches.Add(1)
	go u.touch(ref, cred, now)
	return 0
}

// touch records one use and remembers when the next one is due.
func (u *credentialUse) touch(ref credentialRef, cred actors.Credential, now int64) {
	defer u.touches.Done()
	ctx, cancel := context.WithTimeout(context.Background(), credentialTouchTimeout)
	defer cancel()
	due := u.record(ctx, cred, now)
	u.mu.Lock()
	defer u.mu.Unlock()
	delete(u.inFlight, ref)
	if len(u.due) >= credentialUsesMax {
		u.forgetNotDue(now)
	}
	u.due[ref] = due
}

// record proposes the touch that a use at now calls for, given cred's
// recorded use, if any, and returns when the next may be due. A failure
// (no leader, the credential revoked meanwhile) waits a grain before the
// next try.
func (u *credentialUse) record(ctx context.Context, cred actors.Credential, now int64) int64 {
	retry := now + int64(keyLastUsedGrain)
	seen, err := actors.Answer[actors.CredentialUseView](u.store.Query(ctx, cred, actors.CredentialUseQuery{}, ReadLeader))
	if err != nil {
		return retry
	}
	cmd, due := u.touchFor(cred, seen, now)
	if cmd == nil {
		return due
	}
	if _, err := u.store.Propose(ctx, cmd); err != nil {
		return retry
	}
	return due
}

// touchFor is the rule: the command a use at now calls for, given what is
// recorded (nil when none is due), and when the next may be due.
func (u *credentialUse) touchFor(cred actors.Credential, seen actors.CredentialUseView, now int64) (*actors.Command, int64) {
	cmd := &actors.Command{Account: cred.AccountID, At: now}
	switch cred.Kind {
	case actors.CredentialAPIKey:
		if next := seen.KeyLastUsedAt + int64(keyLastUsedGrain); now < next {
			return nil, next
		}
		cmd.Principal = actors.Principal{Kind: actors.PrincipalAgent, KeyID: cred.ID}
		cmd.Payload = &actors.TouchKey{KeyID: cred.ID}
		return cmd, now + int64(keyLastUsedGrain)
	case actors.CredentialSession:
		// Extended, the session would end idle from now, up to its cap;
		// that is due once it gains a slice or more.
		end := min(now+int64(u.idle), seen.SessionExpiresAtMax)
		if end < seen.SessionExpiresAt+int64(sessionExtendSlice) {
			if end == seen.SessionExpiresAtMax {
				return nil, end // at its cap: no use extends it any more
			}
			return nil, seen.SessionExpiresAt - int64(u.idle) + int64(sessionExtendSlice)
		}
		cmd.Principal = actors.Principal{Kind: actors.PrincipalOwner, SessionID: cred.ID}
		cmd.Payload = &actors.TouchSession{SessionID: cred.ID, ExpiresAt: end}
		return cmd, end - int64(u.idle) + int64(sessionExtendSlice)
	}
	return nil, now + int64(keyLastUsedGrain)
}

// forgetNotDue drops the remembered credentials whose record is due
// anyway, and if that is not enough, all of them: forgetting one costs at
// most an extra query.
func (u *credentialUse) forgetNotDue(now int64) {
	for ref, due := range u.due {
		if due <= now {
			delete(u.due, ref)
		}
	}
	if len(u.due) >= credentialUsesMax {
		clear(u.due)
	}
}

// wait returns once no record is in flight (tests).
func (u *credentialUse) wait() { u.touches.Wait() }
