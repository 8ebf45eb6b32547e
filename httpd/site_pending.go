package httpd

// Stand-ins until the other issue-14 branches merge (deleted then).

import (
	"time"

	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/actors"
)


func (s *Server) requestIsHTTPS(ctx *fasthttp.RequestCtx) bool { return ctx.IsTLS() }

func siteLastUsed(actors.KeyView) string { return "never" }

func (s *Server) siteSignIn(ctx *fasthttp.RequestCtx, login, password string) (string, time.Time, *actors.Error) {
	c, cancel := s.context()
	defer cancel()
	system := actors.Credential{Kind: actors.CredentialSystem, AccountID: login}
	stored, err := s.checkOwnerPassword(c, ctx, system, password)
	if err != nil {
		return "", time.Time{}, err
	}
	id, token, hash := newSessionToken(login)
	now := s.now()
	_, err = s.propose(c, &actors.Command{Account: login, At: now.UnixNano(), Principal: actors.Principal{Kind: actors.PrincipalSystem},
		Payload: &actors.CreateSession{SessionID: id, Hash: hash, ExpiresAt: now.Add(sessionLifetime).UnixNano(), PasswordHash: stored}})
	return token, now, err
}
