package actors

import "crypto/subtle"

// PrincipalKind says who acts: an agent through an API key, the owner, or
// the server itself (account creation by an operator, sign-in checks).
type PrincipalKind uint8

const (
	PrincipalAgent PrincipalKind = iota + 1
	PrincipalOwner
	PrincipalSystem
)

// Principal is the acting party recorded in a Command and in audit events.
// It names the credential, never holds it: the edge authenticated the
// secret, and apply re-checks only that the credential is still live, so a
// revoke that commits first wins.
type Principal struct {
	Kind        PrincipalKind `json:"kind"`
	KeyID       string        `json:"key_id,omitempty"`     // agent
	SessionID   string        `json:"session_id,omitempty"` // owner signed in
	SecretEpoch uint64        `json:"secret_epoch,omitempty"`
}

// CredentialKind is the kind of bearer credential presented at the edge.
type CredentialKind uint8

const (
	CredentialAPIKey CredentialKind = iota + 1
	CredentialOwnerSecret
	CredentialSession
	CredentialSystem // internal only: never built from a request
)

// Credential is a bearer secret as the edge parsed it: the account and id it
// names, and the SHA-256 of the whole secret. Now is the edge's clock, used
// only to expire sessions on reads.
type Credential struct {
	Kind      CredentialKind
	AccountID string
	ID        string
	Hash      Hash
	Now       int64
}

// Authenticate checks cred against the account and returns the principal
// it stands for with that principal's capability (owners and the system
// have write). Hashes are compared in constant time.
func (a *Account) Authenticate(cred Credential) (Principal, Level, *Error) {
	if a.Deleted {
		return Principal{}, LevelNone, errUnauthorized
	}
	switch cred.Kind {
	case CredentialAPIKey:
		k := a.key(cred.ID)
		if k == nil || !hashEqual(k.Hash, cred.Hash) {
			return Principal{}, LevelNone, errUnauthorized
		}
		return Principal{Kind: PrincipalAgent, KeyID: k.ID}, k.Capability, nil
	case CredentialOwnerSecret:
		if !hashEqual(a.OwnerSecretHash, cred.Hash) {
			return Principal{}, LevelNone, errUnauthorized
		}
		return Principal{Kind: PrincipalOwner, SecretEpoch: a.OwnerSecretEpoch}, LevelWrite, nil
	case CredentialSession:
		s := a.session(cred.ID)
		if s == nil || !hashEqual(s.Hash, cred.Hash) || cred.Now >= s.ExpiresAt {
			return Principal{}, LevelNone, errUnauthorized
		}
		return Principal{Kind: PrincipalOwner, SessionID: s.ID}, LevelWrite, nil
	case CredentialSystem:
		return Principal{Kind: PrincipalSystem}, LevelWrite, nil
	}
	return Principal{}, LevelNone, errUnauthorized
}

// stillLive re-checks at apply time that the principal's credential has not
// been revoked since the edge authenticated it, and returns its capability.
func (a *Account) stillLive(p Principal, at int64) (Level, *Error) {
	if a.Deleted {
		return LevelNone, errAccountDeleted
	}
	switch p.Kind {
	case PrincipalAgent:
		if k := a.key(p.KeyID); k != nil {
			return k.Capability, nil
		}
	case PrincipalOwner:
		if p.SessionID != "" {
			if s := a.session(p.SessionID); s != nil && at < s.ExpiresAt {
				return LevelWrite, nil
			}
		} else if p.SecretEpoch == a.OwnerSecretEpoch {
			return LevelWrite, nil
		}
	case PrincipalSystem:
		return LevelWrite, nil
	}
	return LevelNone, errUnauthorized
}

func (a *Account) session(id string) *Session {
	for _, s := range a.Sessions {
		if s.ID == id {
			return s
		}
	}
	return nil
}

func hashEqual(x, y Hash) bool { return subtle.ConstantTimeCompare(x[:], y[:]) == 1 }

// isAgent reports whether the spec's agent rules (grants, capability
// ceiling) apply to p. The owner and the system see and change everything.
func (p Principal) isAgent() bool { return p.Kind == PrincipalAgent }
