package actors

// Recording the use of a credential: when an API key was last used (the
// owner's API access panel shows it) and how long a session lives on. The
// edge proposes these commands itself, coarsely and at most one at a time
// per credential, after a request the credential authenticated. They change
// nothing an agent or the owner sees besides that one time: no version,
// revision or audit event, no idempotency record, no Sheet budget. Apply
// has already refused a revoked key or an ended session (stillLive), so a
// touch that arrives after one is a no-op.

// TouchKey records that the acting agent's key was used at the command's
// time.
type TouchKey struct {
	KeyID string `json:"key_id"`
}

func (*TouchKey) Kind() Kind { return KindTouchKey }

func (p *TouchKey) apply(a *Account, c *Command, _ Level) Result {
	if c.Principal.Kind != PrincipalAgent || c.Principal.KeyID != p.KeyID {
		return fail(Errorf(CodeForbidden, "only a key's own use is recorded on it"))
	}
	// Commands from several requests may commit out of order: the time
	// only moves forward.
	if k := a.key(p.KeyID); k != nil && c.At > k.LastUsedAt {
		k.LastUsedAt = c.At
	}
	return noContent()
}

// TouchSession extends the acting session, which was used at the
// command's time, to end at ExpiresAt, but never past the session's cap.
// An ended session is never revived, and a session is never shortened.
type TouchSession struct {
	SessionID string `json:"session_id"`
	ExpiresAt int64  `json:"expires_at"`
}

func (*TouchSession) Kind() Kind { return KindTouchSession }

func (p *TouchSession) apply(a *Account, c *Command, _ Level) Result {
	if c.Principal.Kind != PrincipalOwner || c.Principal.SessionID != p.SessionID {
		return fail(Errorf(CodeForbidden, "only a session's own use extends it"))
	}
	s := a.session(p.SessionID)
	if s == nil || c.At >= s.ExpiresAt {
		return noContent()
	}
	if end := min(p.ExpiresAt, s.lifetimeEnd()); end > s.ExpiresAt {
		s.ExpiresAt = end
	}
	return noContent()
}

// lifetimeEnd is the latest a session may ever end.
func (s *Session) lifetimeEnd() int64 {
	if s.ExpiresAtMax == 0 {
		return s.ExpiresAt
	}
	return s.ExpiresAtMax
}

// CredentialUseQuery tells the edge what is recorded about the use of the
// credential it authenticates, so that it proposes a touch only when one
// is due.
type CredentialUseQuery struct{}

// CredentialUseView is the answer to CredentialUseQuery, in Unix
// nanoseconds. For an API key: when it was last used (zero: never). For a
// session: when it ends, and the latest it may ever end.
type CredentialUseView struct {
	KeyLastUsedAt       int64
	SessionExpiresAt    int64
	SessionExpiresAtMax int64
}

func (CredentialUseQuery) answer(a *Account, who Principal, _ Level, _ int64) (CredentialUseView, *Error) {
	var v CredentialUseView
	switch {
	case who.Kind == PrincipalAgent:
		if k := a.key(who.KeyID); k != nil {
			v.KeyLastUsedAt = k.LastUsedAt
		}
	case who.SessionID != "":
		if s := a.session(who.SessionID); s != nil {
			v.SessionExpiresAt, v.SessionExpiresAtMax = s.ExpiresAt, s.lifetimeEnd()
		}
	}
	return v, nil
}
