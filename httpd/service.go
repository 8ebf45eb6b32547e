package httpd

import (
	"context"
	"errors"
	"sync"
	"time"
	"unicode/utf8"

	"golang.org/x/crypto/bcrypt"

	"github.com/addrwatch/addrwatch/actors"
	"github.com/addrwatch/addrwatch/chain"
)

// Operations that hold a plaintext secret live here, at the edge: the
// secret is generated and hashed before the command is proposed, so the
// log and snapshots carry only hashes, and the plaintext appears once, in
// the response that creates it.

const (
	passwordBytesMin = 8
	passwordBytesMax = 72             // bcrypt ignores anything longer
	sessionLifetime  = 24 * time.Hour // the cap on a session's whole life, however much it is used
)

// AccountCreated is the answer to an account creation.
type AccountCreated struct {
	AccountID   string      `json:"account_id"`
	OwnerSecret string      `json:"owner_secret"`
	Plan        actors.Plan `json:"plan"`
	Login       string      `json:"login,omitempty"`
}

func validatePassword(field, password string) error {
	if len(password) < passwordBytesMin || len(password) > passwordBytesMax || !utf8.ValidString(password) {
		return actors.Errorf(actors.CodeValidation, "%s must be %d to %d bytes of UTF-8", field, passwordBytesMin, passwordBytesMax)
	}
	return nil
}

// hashPassword hashes a password from the public listener: the hash waits
// in the bounded hashing queue (hashing.go).
func (s *Server) hashPassword(password string) (string, error) {
	return s.hashPasswordIn(s.hashing.run, password)
}

// hashPasswordIn hashes password in a slot that run waits for.
func (s *Server) hashPasswordIn(run func(hash func()) error, password string) (string, error) {
	cost := s.bcryptCost()
	var (
		h   []byte
		err error
	)
	if busy := run(func() { h, err = bcrypt.GenerateFromPassword([]byte(password), cost) }); busy != nil {
		return "", busy
	}
	if err != nil {
		return "", actors.Errorf(actors.CodeInternal, "internal error")
	}
	return string(h), nil
}

// bcryptCost is the cost passwords are hashed at.
func (s *Server) bcryptCost() int {
	if s.passwordCost == 0 {
		return bcrypt.DefaultCost
	}
	return s.passwordCost
}

// accountNetwork is the network a new account records: none on mainnet,
// so that a mainnet node's commands read as every release before
// networks wrote them.
func (s *Server) accountNetwork() chain.Network {
	if s.network.OrMainnet() == chain.Mainnet {
		return ""
	}
	return s.network
}

// CreateAccount creates an account with its first Space and returns its
// owner secret. login is optional (empty for none); another account's
// login, in any case, is a CONFLICT. Only the operator creates accounts,
// so the password hash waits for a slot as long as ctx allows.
func (s *Server) CreateAccount(ctx context.Context, plan actors.Plan, password, login string) (AccountCreated, error) {
	if err := validatePassword("password", password); err != nil {
		return AccountCreated{}, err
	}
	if login != "" {
		if err := actors.ValidateLogin(login); err != nil {
			return AccountCreated{}, err
		}
	}
	passwordHash, err := s.hashPasswordIn(func(hash func()) error { return s.hashing.runForOperator(ctx, hash) }, password)
	if err != nil {
		return AccountCreated{}, err
	}
	account := s.newAccountID()
	secret, secretHash := newOwnerSecret(account)
	cmd := &actors.Command{
		Account:   account,
		At:        s.now().UnixNano(),
		Principal: actors.Principal{Kind: actors.PrincipalSystem},
		Payload:   &actors.CreateAccount{Plan: plan, OwnerSecretHash: secretHash, PasswordHash: passwordHash, FirstSpaceID: newID(), Login: login, Network: s.accountNetwork()},
	}
	if _, err := s.propose(ctx, cmd); err != nil {
		return AccountCreated{}, err
	}
	return AccountCreated{AccountID: account, OwnerSecret: secret, Plan: plan, Login: login}, nil
}

// KeyCreated is the answer to a key creation: the only place the full key
// ever appears.
type KeyCreated struct {
	KeyID      string       `json:"key_id"`
	Key        string       `json:"key"`
	Capability actors.Level `json:"capability"`
	Name       string       `json:"name"`
	CreatedAt  string       `json:"created_at"`
}

// CreateKey creates an API key for the owner whose credential is cred.
func (s *Server) CreateKey(ctx context.Context, cred actors.Credential, capability actors.Level, name string) (KeyCreated, error) {
	return s.createKeyAs(ctx, &request{aud: audienceOwner, cred: cred}, capability, name)
}

// createKeyAs creates an API key for the owner whose credential is r's.
func (s *Server) createKeyAs(ctx context.Context, r *request, capability actors.Level, name string) (KeyCreated, error) {
	if err := actors.ValidateKeyInput(name, capability); err != nil {
		return KeyCreated{}, err
	}
	who, err := s.authorize(ctx, r)
	if err != nil {
		return KeyCreated{}, err
	}
	id, key, hash := newAPIKey(r.cred.AccountID)
	cmd := &actors.Command{Account: r.cred.AccountID, At: s.now().UnixNano(), Principal: who.Principal,
		Payload: &actors.CreateKey{KeyID: id, Name: name, Capability: capability, Hash: hash}}
	res, err := s.propose(ctx, cmd)
	if err != nil {
		return KeyCreated{}, err
	}
	v, err := bodyOf[actors.KeyView](res)
	if err != nil {
		return KeyCreated{}, err
	}
	return KeyCreated{KeyID: v.KeyID, Key: key, Capability: v.Capability, Name: v.Name, CreatedAt: v.CreatedAt}, nil
}

// OwnerCredential parses an owner secret into a credential.
func (s *Server) OwnerCredential(secret string) (actors.Credential, bool) {
	cred, valid := parseBearer(secret, s.now().UnixNano())
	return cred, valid && cred.Kind == actors.CredentialOwnerSecret
}

// checkPassword verifies password against the account's stored hash and
// returns that hash. An unknown account costs the same bcrypt work as a
// known one, so timing does not tell them apart. Its query is not a use of
// cred: a sign-in's is the system's, and an owner's credential was
// authorized, and its use recorded, just before (authorizeWithPassword).
func (s *Server) checkPassword(ctx context.Context, cred actors.Credential, password string) (string, error) {
	hash, err := actors.Answer[string](s.store.Query(ctx, cred, actors.PasswordHashQuery{}, ReadLeader))
	_, refused := errors.AsType[*actors.Error](err)
	if err != nil && !refused {
		return "", specError(err)
	}
	stored := s.dummyPasswordHash
	if !refused {
		stored = hash
	}
	var mismatch error
	if busy := s.hashing.run(func() { mismatch = comparePassword([]byte(stored), []byte(password)) }); busy != nil {
		return "", busy
	}
	if mismatch != nil || refused {
		return "", errWrongAccountOrPassword
	}
	return stored, nil
}

// errWrongAccountOrPassword refuses a password check without saying which
// part was wrong.
var errWrongAccountOrPassword = actors.Errorf(actors.CodeUnauthorized, "wrong account or password")

// comparePassword compares a password with its bcrypt hash; a variable so
// that a test can see that a check ran a comparison.
var comparePassword = bcrypt.CompareHashAndPassword

// dummyPasswordHashes holds, per bcrypt cost, the hash a password is
// compared against when there is no account to check it with (an unknown
// account id or login), so that such a check costs what a real one does.
var dummyPasswordHashes sync.Map // cost → hash

// dummyPasswordHash returns the dummy hash at cost, made once per process.
func dummyPasswordHash(cost int) string {
	if h, made := dummyPasswordHashes.Load(cost); made {
		return h.(string)
	}
	h, err := bcrypt.GenerateFromPassword([]byte("addrwatch-timing-equalizer"), cost)
	if err != nil {
		panic("httpd: cannot make the dummy password hash: " + err.Error())
	}
	stored, _ := dummyPasswordHashes.LoadOrStore(cost, string(h))
	return stored.(string)
}
