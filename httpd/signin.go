package httpd

import (
	"context"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/actors"
)

// Sign-in: a person gives a login (or, for scripts, the account id) and
// the password, and gets a session. A login no account has and a wrong
// password are told apart neither by the answer nor by its cost: both
// answer errWrongLoginOrPassword after one bcrypt comparison at the
// server's cost (an unknown login is compared against the dummy hash,
// service.go), and both earn the same back-off (edge/owner.go).

// errWrongLoginOrPassword refuses a sign-in by login without saying which
// part was wrong.
var errWrongLoginOrPassword = actors.Errorf(actors.CodeUnauthorized, "wrong login or password")

// signInOwner checks login (or accountID when login is empty) and password,
// applies the sign-in back-off for the client of ctx, and creates a session.
func (s *Server) signInOwner(r *request, login, accountID, password string) (token string, expiresAt time.Time, err error) {
	c, cancel := s.context()
	defer cancel()
	var stored string
	if login != "" {
		if err := actors.ValidateLogin(login); err != nil {
			return "", time.Time{}, err
		}
		accountID, stored, err = s.checkLoginPassword(c, r, login, password)
	} else {
		system := actors.Credential{Kind: actors.CredentialSystem, AccountID: accountID}
		stored, err = s.checkOwnerPassword(c, r, system, password)
	}
	if err != nil {
		return "", time.Time{}, err
	}
	id, token, hash := newSessionToken(accountID)
	now := s.now()
	ends, endsMax := s.use.sessionEnds(now)
	_, err = s.propose(c, &actors.Command{Account: accountID, At: now.UnixNano(), Principal: actors.Principal{Kind: actors.PrincipalSystem},
		Payload: &actors.CreateSession{SessionID: id, Hash: hash, ExpiresAt: ends, ExpiresAtMax: endsMax, PasswordHash: stored}})
	if err != nil {
		return "", time.Time{}, err
	}
	return token, time.Unix(0, ends).UTC(), nil
}

// checkLoginPassword finds the account of login and checks password
// against it, behind the client's and the login's back-off. It returns the
// account and the password hash matched.
func (s *Server) checkLoginPassword(c context.Context, r *request, login, password string) (accountID, stored string, err error) {
	if refused := s.owner.LoginPassword(r.ctx, r.attempt, login, func() bool {
		// An unknown login leaves accountID empty, which no account has:
		// the check then runs the same query and compares against the
		// dummy hash, as for an unknown account id.
		accountID, _ = s.store.AccountForLogin(login)
		stored, err = s.checkPassword(c, actors.Credential{Kind: actors.CredentialSystem, AccountID: accountID}, password)
		return err == errWrongAccountOrPassword
	}); refused != nil {
		return "", "", refused
	}
	if err == errWrongAccountOrPassword {
		return "", "", errWrongLoginOrPassword
	}
	return accountID, stored, err
}

// signInRequest is the body of POST /owner/v1/sessions.
type signInRequest struct {
	Login     *string `json:"login"`
	AccountID *string `json:"account_id"`
	Password  *string `json:"password"`
}

// sessionCreated is the answer of a sign-in; its fields are in the order
// the map it replaced was encoded in.
type sessionCreated struct {
	ExpiresAt string `json:"expires_at"`
	Session   string `json:"session"`
}

// signIn is POST /owner/v1/sessions: {"login","password"} or
// {"account_id","password"}.
func (s *Server) signIn(r *request) error {
	ctx := r.ctx
	var req signInRequest
	if err := decodeBody(ctx, &req, ownerBodyBytesMax); err != nil {
		return err
	}
	if (req.Login == nil) == (req.AccountID == nil) {
		return actors.Errorf(actors.CodeValidation, "give exactly one of login and account_id")
	}
	if req.Password == nil {
		return required("password")
	}
	login, accountID := deref(req.Login), deref(req.AccountID)
	if req.Login != nil && login == "" {
		if err := actors.ValidateLogin(login); err != nil {
			return err
		}
	}
	token, expiresAt, err := s.signInOwner(r, login, accountID, *req.Password)
	if err != nil {
		return err
	}
	return answer(ctx, fasthttp.StatusCreated, sessionCreated{ExpiresAt: expiresAt.UTC().Format(time.RFC3339Nano), Session: token})
}
