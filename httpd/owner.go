package httpd

import (
	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/actors"
)

// ownerPrefix is the base path of the owner API.
const ownerPrefix = "/owner/v1"

// ownerBodyBytesMax bounds owner API bodies.
const ownerBodyBytesMax = 16 << 10

func (s *Server) registerOwner(r routeAdder) {
	r.POST(ownerPrefix+"/sessions", handle(s.signIn))
	r.DELETE(ownerPrefix+"/sessions/current", func(ctx *fasthttp.RequestCtx) {
		s.write(ctx, audienceOwner, writeSpec{payload: noBody(&actors.DeleteSession{})})
	})
	r.POST(ownerPrefix+"/keys", handle(s.createKey))
	r.GET(ownerPrefix+"/keys", func(ctx *fasthttp.RequestCtx) {
		s.read(ctx, audienceOwner, actors.ListKeysQuery{})
	})
	r.DELETE(ownerPrefix+"/keys/{key_id}", func(ctx *fasthttp.RequestCtx) {
		s.write(ctx, audienceOwner, writeSpec{payload: noBody(&actors.RevokeKey{KeyID: pathParam(ctx, "key_id")})})
	})
	r.PUT(ownerPrefix+"/grants/portfolio/{card_id}", s.setGrant(actors.ResourcePortfolioCard, "card_id"))
	r.PUT(ownerPrefix+"/grants/bookmark-spaces/{space_id}", s.setGrant(actors.ResourceSpace, "space_id"))
	r.PUT(ownerPrefix+"/plan", func(ctx *fasthttp.RequestCtx) {
		s.write(ctx, audienceOwner, writeSpec{payload: func(ctx *fasthttp.RequestCtx, _ string) (actors.Payload, *actors.Error) {
			var req struct {
				Plan *string `json:"plan"`
			}
			if err := decodeBody(ctx, &req, ownerBodyBytesMax); err != nil {
				return nil, err
			}
			if req.Plan == nil {
				return nil, required("plan")
			}
			plan, known := actors.ParsePlan(*req.Plan)
			if !known {
				return nil, actors.Errorf(actors.CodeValidation, "plan must be base or extended")
			}
			return &actors.SetPlan{Plan: plan}, nil
		}})
	})
	r.POST(ownerPrefix+"/password", handle(s.changePassword))
	r.POST(ownerPrefix+"/owner-secret", func(ctx *fasthttp.RequestCtx) {
		var secret string
		s.write(ctx, audienceOwner, writeSpec{
			payload: func(_ *fasthttp.RequestCtx, account string) (actors.Payload, *actors.Error) {
				var hash actors.Hash
				secret, hash = newOwnerSecret(account)
				return &actors.RotateOwnerSecret{NewHash: hash}, nil
			},
			decorate: func(res actors.Result) actors.Result {
				return actors.Result{Status: fasthttp.StatusOK, Body: map[string]string{"owner_secret": secret}}
			},
		})
	})
	r.DELETE(ownerPrefix+"/account", func(ctx *fasthttp.RequestCtx) {
		s.write(ctx, audienceOwner, writeSpec{payload: func(ctx *fasthttp.RequestCtx, _ string) (actors.Payload, *actors.Error) {
			var req struct {
				Confirm *bool `json:"confirm"`
			}
			if err := decodeBody(ctx, &req, ownerBodyBytesMax); err != nil {
				return nil, err
			}
			if req.Confirm == nil || !*req.Confirm {
				return nil, actors.Errorf(actors.CodeValidation, `deleting the account needs {"confirm": true}`)
			}
			return &actors.DeleteAccount{}, nil
		}})
	})
	s.registerResources(r, ownerPrefix, audienceOwner)
}

// noBody is the payload builder of a route whose request has no body.
func noBody(p actors.Payload) func(*fasthttp.RequestCtx, string) (actors.Payload, *actors.Error) {
	return func(*fasthttp.RequestCtx, string) (actors.Payload, *actors.Error) { return p, nil }
}

func (s *Server) setGrant(resource actors.ResourceKind, param string) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		s.write(ctx, audienceOwner, writeSpec{payload: func(ctx *fasthttp.RequestCtx, _ string) (actors.Payload, *actors.Error) {
			var req struct {
				Level *string `json:"level"`
			}
			if err := decodeBody(ctx, &req, ownerBodyBytesMax); err != nil {
				return nil, err
			}
			if req.Level == nil {
				return nil, required("level")
			}
			level, known := actors.ParseLevel(*req.Level)
			if !known {
				return nil, actors.Errorf(actors.CodeValidation, "level must be none, read or write")
			}
			return &actors.SetGrant{Resource: resource, ID: pathParam(ctx, param), Level: level}, nil
		}})
	}
}

func (s *Server) signIn(ctx *fasthttp.RequestCtx) *actors.Error {
	var req struct {
		AccountID *string `json:"account_id"`
		Password  *string `json:"password"`
	}
	if err := decodeBody(ctx, &req, ownerBodyBytesMax); err != nil {
		return err
	}
	if req.AccountID == nil {
		return required("account_id")
	}
	if req.Password == nil {
		return required("password")
	}
	c, cancel := s.context()
	defer cancel()
	system := actors.Credential{Kind: actors.CredentialSystem, AccountID: *req.AccountID}
	stored, err := s.checkPassword(c, system, *req.Password)
	if err != nil {
		return err
	}
	id, token, hash := newSessionToken(*req.AccountID)
	now := s.now()
	res, err := s.propose(c, &actors.Command{Account: *req.AccountID, At: now.UnixNano(), Principal: actors.Principal{Kind: actors.PrincipalSystem},
		Payload: &actors.CreateSession{SessionID: id, Hash: hash, ExpiresAt: now.Add(sessionLifetime).UnixNano(), PasswordHash: stored}})
	if err != nil {
		return err
	}
	v := res.Body.(actors.SessionView)
	writeJSON(ctx, fasthttp.StatusCreated, map[string]string{"session": token, "expires_at": v.ExpiresAt})
	return nil
}

func (s *Server) createKey(ctx *fasthttp.RequestCtx) *actors.Error {
	cred, err := s.credential(ctx, audienceOwner)
	if err != nil {
		return err
	}
	var req struct {
		Capability *string `json:"capability"`
		Name       *string `json:"name"`
	}
	if err := decodeBody(ctx, &req, ownerBodyBytesMax); err != nil {
		return err
	}
	if req.Capability == nil {
		return required("capability")
	}
	capability, known := actors.ParseLevel(*req.Capability)
	if !known || capability == actors.LevelNone {
		return actors.Errorf(actors.CodeValidation, "capability must be read or write")
	}
	name := ""
	if req.Name != nil {
		name = *req.Name
	}
	c, cancel := s.context()
	defer cancel()
	created, err := s.CreateKey(c, cred, capability, name)
	if err != nil {
		return err
	}
	writeJSON(ctx, fasthttp.StatusCreated, created)
	return nil
}

func (s *Server) changePassword(ctx *fasthttp.RequestCtx) *actors.Error {
	cred, err := s.credential(ctx, audienceOwner)
	if err != nil {
		return err
	}
	var req struct {
		Current *string `json:"current_password"`
		New     *string `json:"new_password"`
	}
	if err := decodeBody(ctx, &req, ownerBodyBytesMax); err != nil {
		return err
	}
	if req.Current == nil {
		return required("current_password")
	}
	if req.New == nil {
		return required("new_password")
	}
	if err := validatePassword("new_password", *req.New); err != nil {
		return err
	}
	c, cancel := s.context()
	defer cancel()
	who, err := s.authorize(c, cred)
	if err != nil {
		return err
	}
	stored, err := s.checkPassword(c, cred, *req.Current)
	if err != nil {
		return err
	}
	newHash, err := s.hashPassword(*req.New)
	if err != nil {
		return err
	}
	res, err := s.propose(c, &actors.Command{Account: cred.AccountID, At: s.now().UnixNano(), Principal: who.Principal,
		Payload: &actors.ChangePassword{ExpectedPasswordHash: stored, NewPasswordHash: newHash}})
	if err != nil {
		return err
	}
	writeResult(ctx, res)
	return nil
}
