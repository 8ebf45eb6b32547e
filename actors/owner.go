package actors

import (
	"time"
	"unicode/utf8"

	"github.com/addrwatch/addrwatch/chain"
)

// The owner's commands: account lifecycle, keys, sessions, grants, plan and
// credentials. Agents never reach them (the owner API refuses API keys);
// requireOwner enforces that again inside the rules.

// CreateAccount creates an account with its plan, hashed credentials and
// the empty first bitcoin Space.
type CreateAccount struct {
	Plan            Plan   `json:"plan"`
	OwnerSecretHash Hash   `json:"owner_secret_hash"`
	PasswordHash    string `json:"password_hash"`
	FirstSpaceID    string `json:"first_space_id"`
	// Login is the owner's login, if one was given. Entries written before
	// logins existed carry none and create an account without one.
	Login string `json:"login,omitempty"`
	// Network is the Bitcoin network whose addresses the account's cards
	// hold: the node's --network, carried in the command so that every
	// replica validates addresses alike whatever its own flags say.
	// Entries written before networks carry none: mainnet.
	Network chain.Network `json:"network,omitempty"`

	// loginTaken is set by the registry, as on SetLogin (login.go).
	loginTaken bool
}

func (*CreateAccount) Kind() Kind { return KindCreateAccount }

// apply is never reached: Apply handles account creation itself because
// there is no account yet to apply to.
func (*CreateAccount) apply(a *Account, _ *Command, _ Level) Result {
	return fail(Errorf(CodeConflict, "account %s already exists", a.ID))
}

// firstSpaceName is the name of the Space every account starts with.
const firstSpaceName = "Bitcoin"

func newAccount(c *Command, p *CreateAccount) (*Account, Result) {
	if c.Principal.Kind != PrincipalSystem {
		return nil, fail(errUnauthorized)
	}
	if c.Account == "" || p.FirstSpaceID == "" || p.PasswordHash == "" {
		return nil, fail(Errorf(CodeValidation, "account id, first space id and password hash are required"))
	}
	if p.Login != "" {
		if err := ValidateLogin(p.Login); err != nil {
			return nil, fail(err)
		}
		if p.loginTaken {
			return nil, fail(errLoginTaken)
		}
	}
	if p.Network != "" {
		if _, err := chain.ParseNetwork(string(p.Network)); err != nil {
			return nil, fail(Errorf(CodeValidation, "network must be mainnet, testnet, signet or regtest"))
		}
	}
	a := &Account{
		ID:              c.Account,
		Login:           p.Login,
		Network:         p.Network,
		Plan:            p.Plan,
		OwnerSecretHash: p.OwnerSecretHash,
		PasswordHash:    p.PasswordHash,
		CreatedAt:       c.At,
		Keys:            []*APIKey{},
		Sessions:        []*Session{},
		Portfolio:       []*Card{},
	}
	// The first Space exists before any owner grant, so it starts at none.
	a.Spaces = []*Space{{ID: p.FirstSpaceID, Version: a.nextVersion(), Type: SpaceBitcoin, Name: firstSpaceName, Grant: LevelNone, Cards: []*Card{}, CreatedAt: c.At}}
	a.BookmarkRevision = a.Seq
	return a, created(AccountCreatedView{AccountID: a.ID, Login: a.Login, Plan: a.Plan})
}

// AccountCreatedView is the body of a created account; the edge adds the
// owner secret, which only it ever holds in plaintext.
type AccountCreatedView struct {
	AccountID string `json:"account_id"`
	Login     string `json:"login,omitempty"`
	Plan      Plan   `json:"plan"`
}

func requireOwner(c *Command) *Error {
	if c.Principal.Kind == PrincipalAgent {
		return Errorf(CodeForbidden, "API keys cannot manage the account")
	}
	return nil
}

// DeleteAccount deletes the account and with it every key and session.
type DeleteAccount struct{}

func (*DeleteAccount) Kind() Kind { return KindDeleteAccount }

func (*DeleteAccount) apply(a *Account, c *Command, _ Level) Result {
	if err := requireOwner(c); err != nil {
		return fail(err)
	}
	*a = Account{ID: a.ID, Deleted: true, Seq: a.Seq + 1}
	return noContent()
}

// CreateKey creates an API key; the edge generated the secret and sends
// only its hash.
type CreateKey struct {
	KeyID      string `json:"key_id"`
	Name       string `json:"name"`
	Capability Level  `json:"capability"`
	Hash       Hash   `json:"hash"`
}

func (*CreateKey) Kind() Kind { return KindCreateKey }

func (p *CreateKey) apply(a *Account, c *Command, _ Level) Result {
	if err := requireOwner(c); err != nil {
		return fail(err)
	}
	if err := ValidateKeyInput(p.Name, p.Capability); err != nil {
		return fail(err)
	}
	if len(a.Keys) >= keysMax {
		return fail(Errorf(CodeConflict, "an account may hold at most %d API keys; revoke one first", keysMax))
	}
	if p.KeyID == "" || a.key(p.KeyID) != nil {
		return fail(Errorf(CodeConflict, "key id is taken"))
	}
	k := &APIKey{ID: p.KeyID, Name: p.Name, Capability: p.Capability, Hash: p.Hash, CreatedAt: c.At}
	a.Keys = append(a.Keys, k)
	a.nextVersion()
	return created(keyView(k))
}

// ValidateKeyInput checks a new key's name and capability.
func ValidateKeyInput(name string, capability Level) *Error {
	if capability != LevelRead && capability != LevelWrite {
		return Errorf(CodeValidation, "capability must be read or write")
	}
	if !utf8.ValidString(name) || utf8.RuneCountInString(name) > keyNameCharsMax || !isPrintable(name) {
		return Errorf(CodeValidation, "name must be at most %d printable characters", keyNameCharsMax)
	}
	return nil
}

// KeyView is an API key as the owner sees it: never its secret or hash.
// LastUsedAt is null for a key no agent has used yet.
type KeyView struct {
	KeyID      string  `json:"key_id"`
	Capability Level   `json:"capability"`
	Name       string  `json:"name"`
	CreatedAt  string  `json:"created_at"`
	LastUsedAt *string `json:"last_used_at"`
}

func keyView(k *APIKey) KeyView {
	v := KeyView{KeyID: k.ID, Capability: k.Capability, Name: k.Name, CreatedAt: formatTime(k.CreatedAt)}
	if k.LastUsedAt != 0 {
		lastUsed := formatTime(k.LastUsedAt)
		v.LastUsedAt = &lastUsed
	}
	return v
}

// RevokeKey revokes one API key; it stops working on the next request.
type RevokeKey struct {
	KeyID string `json:"key_id"`
}

func (*RevokeKey) Kind() Kind { return KindRevokeKey }

func (p *RevokeKey) apply(a *Account, c *Command, _ Level) Result {
	if err := requireOwner(c); err != nil {
		return fail(err)
	}
	for i, k := range a.Keys {
		if k.ID == p.KeyID {
			a.Keys = append(a.Keys[:i], a.Keys[i+1:]...)
			a.nextVersion()
			return noContent()
		}
	}
	return fail(Errorf(CodeNotFound, "key not found"))
}

// CreateSession records an owner sign-in. The edge checked the password
// against PasswordHash; the command fails if the password changed since.
// ExpiresAt ends an idle session; ExpiresAtMax, when set, is how far use
// may extend it (TouchSession). Entries written before sessions could be
// extended carry none, and their sessions end at ExpiresAt, as they did.
type CreateSession struct {
	SessionID    string `json:"session_id"`
	Hash         Hash   `json:"hash"`
	ExpiresAt    int64  `json:"expires_at"`
	ExpiresAtMax int64  `json:"expires_at_max,omitempty"`
	PasswordHash string `json:"password_hash"`
}

func (*CreateSession) Kind() Kind { return KindCreateSession }

func (p *CreateSession) apply(a *Account, c *Command, _ Level) Result {
	if err := requireOwner(c); err != nil {
		return fail(err)
	}
	if p.PasswordHash != a.PasswordHash {
		return fail(errUnauthorized)
	}
	// Expired sessions go first; then, at the bound, the oldest live one.
	live := a.Sessions[:0]
	for _, s := range a.Sessions {
		if c.At < s.ExpiresAt {
			live = append(live, s)
		}
	}
	a.Sessions = live
	if len(a.Sessions) >= sessionsMax {
		a.Sessions = append(a.Sessions[:0], a.Sessions[1:]...)
	}
	a.Sessions = append(a.Sessions, &Session{ID: p.SessionID, Hash: p.Hash, CreatedAt: c.At, ExpiresAt: p.ExpiresAt, ExpiresAtMax: p.ExpiresAtMax})
	a.nextVersion()
	return created(SessionView{ExpiresAt: formatTime(p.ExpiresAt)})
}

// SessionView is the body of a sign-in; the edge adds the session token.
type SessionView struct {
	ExpiresAt string `json:"expires_at"`
}

// DeleteSession is sign-out: it ends the acting session and nothing else.
// API keys keep working.
type DeleteSession struct{}

func (*DeleteSession) Kind() Kind { return KindDeleteSession }

func (*DeleteSession) apply(a *Account, c *Command, _ Level) Result {
	if c.Principal.Kind != PrincipalOwner || c.Principal.SessionID == "" {
		return fail(Errorf(CodeValidation, "sign-out needs a session token, not the owner secret"))
	}
	for i, s := range a.Sessions {
		if s.ID == c.Principal.SessionID {
			a.Sessions = append(a.Sessions[:i], a.Sessions[i+1:]...)
			a.nextVersion()
			return noContent()
		}
	}
	return fail(errUnauthorized)
}

// SetGrant sets the agent grant on an Account card or a Space.
type SetGrant struct {
	Resource ResourceKind `json:"resource"` // ResourcePortfolioCard or ResourceSpace
	ID       string       `json:"id"`
	Level    Level        `json:"level"`
}

func (*SetGrant) Kind() Kind { return KindSetGrant }

func (p *SetGrant) apply(a *Account, c *Command, _ Level) Result {
	if err := requireOwner(c); err != nil {
		return fail(err)
	}
	if p.Level > LevelWrite {
		return fail(Errorf(CodeValidation, "level must be none, read or write"))
	}
	ref := ResourceRef{Kind: p.Resource, ID: p.ID}
	switch p.Resource {
	case ResourcePortfolioCard:
		_, card := a.portfolioCard(p.ID)
		if card == nil {
			return fail(errCardNotFound)
		}
		card.Grant = p.Level
	case ResourceSpace:
		_, s := a.space(p.ID)
		if s == nil {
			return fail(errSpaceNotFound)
		}
		s.Grant, s.GrantCleared = p.Level, false
	default:
		return fail(Errorf(CodeValidation, "grants apply to portfolio cards and spaces"))
	}
	a.nextVersion()
	a.recordEvent(c, EventScopeChanged, ref)
	return ok(GrantView{Resource: p.Resource, ID: p.ID, Level: p.Level})
}

// GrantView is the body of a grant change.
type GrantView struct {
	Resource ResourceKind `json:"resource"`
	ID       string       `json:"id"`
	Level    Level        `json:"level"`
}

// SetPlan changes the plan. Nothing is deleted on a downgrade: Spaces past
// the plan's limit become inaccessible and return untouched on upgrade.
type SetPlan struct {
	Plan Plan `json:"plan"`
}

func (*SetPlan) Kind() Kind { return KindSetPlan }

func (p *SetPlan) apply(a *Account, c *Command, _ Level) Result {
	if err := requireOwner(c); err != nil {
		return fail(err)
	}
	if int(p.Plan) >= len(planLimits) {
		return fail(Errorf(CodeValidation, "plan must be base or extended"))
	}
	if a.Plan != p.Plan {
		a.Plan = p.Plan
		a.nextVersion()
		a.recordEvent(c, EventScopeChanged, ResourceRef{Kind: ResourceAccount})
	}
	return ok(PlanView{Plan: a.Plan})
}

// PlanView is the body of a plan change.
type PlanView struct {
	Plan Plan `json:"plan"`
}

// ChangePassword replaces the password hash and revokes every API key and
// every other session. The edge verified the current password against
// ExpectedPasswordHash; a concurrent change makes this one fail.
//
// NewOwnerSecretHash, when set, also replaces the owner secret (the edge
// shows the new secret once), so a password change locks out whoever held
// the old one. Entries written before the field existed leave the owner
// secret as it was: a replayed log applies as it did when it was written.
type ChangePassword struct {
	ExpectedPasswordHash string `json:"expected_password_hash"`
	NewPasswordHash      string `json:"new_password_hash"`
	NewOwnerSecretHash   *Hash  `json:"new_owner_secret_hash,omitempty"`
}

func (*ChangePassword) Kind() Kind { return KindChangePassword }

func (p *ChangePassword) apply(a *Account, c *Command, _ Level) Result {
	if err := requireOwner(c); err != nil {
		return fail(err)
	}
	if p.ExpectedPasswordHash != a.PasswordHash {
		return fail(errWrongPassword)
	}
	a.PasswordHash = p.NewPasswordHash
	a.revokeAllKeys()
	kept := a.Sessions[:0]
	for _, s := range a.Sessions {
		if s.ID == c.Principal.SessionID {
			kept = append(kept, s)
		}
	}
	a.Sessions = kept
	a.nextVersion()
	if p.NewOwnerSecretHash == nil {
		return noContent()
	}
	a.replaceOwnerSecret(*p.NewOwnerSecretHash)
	return ok(struct{}{})
}

// RotateOwnerSecret replaces the owner secret and revokes every API key.
//
// ExpectedPasswordHash is the password hash the edge checked the owner's
// current password against; a password change that commits first makes
// the rotation fail. Entries written before rotation needed the password
// carry none and rotate unchecked, as they did.
type RotateOwnerSecret struct {
	NewHash              Hash   `json:"new_hash"`
	ExpectedPasswordHash string `json:"expected_password_hash,omitempty"`
}

func (*RotateOwnerSecret) Kind() Kind { return KindRotateOwnerSecret }

func (p *RotateOwnerSecret) apply(a *Account, c *Command, _ Level) Result {
	if err := requireOwner(c); err != nil {
		return fail(err)
	}
	if p.ExpectedPasswordHash != "" && p.ExpectedPasswordHash != a.PasswordHash {
		return fail(errWrongPassword)
	}
	a.replaceOwnerSecret(p.NewHash)
	a.revokeAllKeys()
	a.nextVersion()
	return ok(struct{}{})
}

// errWrongPassword refuses a command whose checked password is no longer
// the account's.
var errWrongPassword = Errorf(CodeUnauthorized, "current password is wrong")

// replaceOwnerSecret installs a new owner secret. The epoch makes commands
// already authenticated with the old secret fail at apply (stillLive).
func (a *Account) replaceOwnerSecret(hash Hash) {
	a.OwnerSecretHash = hash
	a.OwnerSecretEpoch++
}

func (a *Account) revokeAllKeys() { a.Keys = a.Keys[:0] }

// formatTime renders a command time as RFC 3339 in UTC.
func formatTime(unixNanos int64) string {
	return time.Unix(0, unixNanos).UTC().Format(time.RFC3339Nano)
}
