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
	r.POST(ownerPrefix+"/sessions", s.signIn)
	r.DELETE(ownerPrefix+"/sessions/current", func(ctx *fasthttp.RequestCtx) {
		s.write(ctx, audienceOwner, writeSpec{payload: noBody(&actors.DeleteSession{})})
	})
	r.POST(ownerPrefix+"/keys", s.createKey)
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
	r.POST(ownerPrefix+"/password", s.changePassword)
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
	s.registerPortfolio(r, ownerPrefix, audienceOwner)
	s.registerSpaces(r, ownerPrefix, audienceOwner)
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

func (s *Server) signIn(ctx *fasthttp.RequestCtx) {
	var req struct {
		AccountID *string `json:"account_id"`
		Password  *string `json:"password"`
	}
	if err := decodeBody(ctx, &req, ownerBodyBytesMax); err != nil {
		writeError(ctx, err)
		return
	}
	if req.AccountID == nil {
		writeError(ctx, required("account_id"))
		return
	}
	if req.Password == nil {
		writeError(ctx, required("password"))
		return
	}
	c, cancel := s.context()
	defer cancel()
	system := actors.Credential{Kind: actors.CredentialSystem, AccountID: *req.AccountID}
	stored, err := s.checkPassword(c, system, *req.Password)
	if err != nil {
		writeError(ctx, err)
		return
	}
	id, token, hash := newSessionToken(*req.AccountID)
	now := s.now()
	cmd := &actors.Command{Account: *req.AccountID, At: now.UnixNano(), Principal: actors.Principal{Kind: actors.PrincipalSystem},
		Payload: &actors.CreateSession{SessionID: id, Hash: hash, ExpiresAt: now.Add(sessionLifetime).UnixNano(), PasswordHash: stored}}
	res, perr := s.store.Propose(c, cmd)
	if perr != nil {
		writeError(ctx, storeError(perr))
		return
	}
	if res.Err != nil {
		writeError(ctx, res.Err)
		return
	}
	v := res.Body.(actors.SessionView)
	writeJSON(ctx, fasthttp.StatusCreated, map[string]string{"session": token, "expires_at": v.ExpiresAt})
}

func (s *Server) createKey(ctx *fasthttp.RequestCtx) {
	cred, err := s.credential(ctx, audienceOwner)
	if err != nil {
		writeError(ctx, err)
		return
	}
	var req struct {
		Capability *string `json:"capability"`
		Name       *string `json:"name"`
	}
	if err := decodeBody(ctx, &req, ownerBodyBytesMax); err != nil {
		writeError(ctx, err)
		return
	}
	if req.Capability == nil {
		writeError(ctx, required("capability"))
		return
	}
	capability, known := actors.ParseLevel(*req.Capability)
	if !known || capability == actors.LevelNone {
		writeError(ctx, actors.Errorf(actors.CodeValidation, "capability must be read or write"))
		return
	}
	name := ""
	if req.Name != nil {
		name = *req.Name
	}
	c, cancel := s.context()
	defer cancel()
	created, kerr := s.CreateKey(c, cred, capability, name)
	if kerr != nil {
		writeError(ctx, kerr)
		return
	}
	writeJSON(ctx, fasthttp.StatusCreated, created)
}

func (s *Server) changePassword(ctx *fasthttp.RequestCtx) {
	cred, err := s.credential(ctx, audienceOwner)
	if err != nil {
		writeError(ctx, err)
		return
	}
	var req struct {
		Current *string `json:"current_password"`
		New     *string `json:"new_password"`
	}
	if err := decodeBody(ctx, &req, ownerBodyBytesMax); err != nil {
		writeError(ctx, err)
		return
	}
	if req.Current == nil {
		writeError(ctx, required("current_password"))
		return
	}
	if req.New == nil {
		writeError(ctx, required("new_password"))
		return
	}
	if err := validatePassword("new_password", *req.New); err != nil {
		writeError(ctx, err)
		return
	}
	c, cancel := s.context()
	defer cancel()
	who, err := s.authorize(c, cred)
	if err != nil {
		writeError(ctx, err)
		return
	}
	stored, err := s.checkPassword(c, cred, *req.Current)
	if err != nil {
		writeError(ctx, err)
		return
	}
	newHash, err := s.hashPassword(*req.New)
	if err != nil {
		writeError(ctx, err)
		return
	}
	cmd := &actors.Command{Account: cred.AccountID, At: s.now().UnixNano(), Principal: who.Principal,
		Payload: &actors.ChangePassword{ExpectedPasswordHash: stored, NewPasswordHash: newHash}}
	res, perr := s.store.Propose(c, cmd)
	if perr != nil {
		writeError(ctx, storeError(perr))
		return
	}
	writeResult(ctx, res)
}
