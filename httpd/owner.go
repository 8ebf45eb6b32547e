package httpd

import (
	"context"

	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/actors"
)

// ownerPrefix is the base path of the owner API.
const ownerPrefix = "/owner/v1"

// ownerBodyBytesMax bounds owner API bodies.
const ownerBodyBytesMax = 16 << 10

func (s *Server) registerOwner(r routeAdder) {
	api := routes{add: s.owner.Guarded(r), s: s, aud: audienceOwner}
	api.post(ownerPrefix+"/sessions", s.signIn)
	api.delete(ownerPrefix+"/sessions/current", func(r *request) error {
		return s.write(r, writeSpec{payload: noBody(&actors.DeleteSession{})})
	})
	api.post(ownerPrefix+"/keys", s.createKey)
	api.get(ownerPrefix+"/keys", func(r *request) error {
		return s.read(r, actors.ListKeysQuery{})
	})
	api.delete(ownerPrefix+"/keys/{key_id}", func(r *request) error {
		return s.write(r, writeSpec{payload: noBody(&actors.RevokeKey{KeyID: pathParam(r.ctx, "key_id")})})
	})
	api.put(ownerPrefix+"/grants/portfolio/{card_id}", s.setGrant(actors.ResourcePortfolioCard, "card_id"))
	api.put(ownerPrefix+"/grants/bookmark-spaces/{space_id}", s.setGrant(actors.ResourceSpace, "space_id"))
	api.put(ownerPrefix+"/plan", func(r *request) error {
		return s.write(r, writeSpec{payload: func(ctx *fasthttp.RequestCtx, _ string) (actors.Payload, error) {
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
	api.post(ownerPrefix+"/password", s.changePassword)
	api.post(ownerPrefix+"/owner-secret", s.rotateOwnerSecret)
	s.registerLogin(api)
	api.delete(ownerPrefix+"/account", s.deleteAccount)
	s.registerResources(api, ownerPrefix)
	s.registerHistoryCSV(api)
	s.registerLabels(api)
	s.registerActivity(api)
}

// noBody is the payload builder of a route whose request has no body.
func noBody(p actors.Payload) func(*fasthttp.RequestCtx, string) (actors.Payload, error) {
	return func(*fasthttp.RequestCtx, string) (actors.Payload, error) { return p, nil }
}

func (s *Server) setGrant(resource actors.ResourceKind, param string) func(*request) error {
	return func(r *request) error {
		return s.write(r, writeSpec{payload: func(ctx *fasthttp.RequestCtx, _ string) (actors.Payload, error) {
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

func (s *Server) createKey(r *request) error {
	if err := s.bearer(r); err != nil {
		return err
	}
	var req struct {
		Capability *string `json:"capability"`
		Name       *string `json:"name"`
	}
	if err := decodeBody(r.ctx, &req, ownerBodyBytesMax); err != nil {
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
	created, err := s.createKeyAs(c, r, capability, name)
	if err != nil {
		return err
	}
	return answer(r.ctx, fasthttp.StatusCreated, created)
}

// changePassword sets a new password and a new owner secret, which is
// shown once in the answer. Keys, the old owner secret and every session
// but the acting one stop working.
func (s *Server) changePassword(r *request) error {
	if err := s.bearer(r); err != nil {
		return err
	}
	var req struct {
		Current *string `json:"current_password"`
		New     *string `json:"new_password"`
	}
	if err := decodeBody(r.ctx, &req, ownerBodyBytesMax); err != nil {
		return err
	}
	if req.Current == nil {
		return required("current_password")
	}
	if req.New == nil {
		return required("new_password")
	}
	secret, err := s.replacePassword(r, *req.Current, *req.New)
	if err != nil {
		return err
	}
	return answer(r.ctx, fasthttp.StatusOK, map[string]string{"owner_secret": secret})
}

// replacePassword is a password change by the owner of r's credential,
// for the owner API and the site: it returns the new owner secret.
func (s *Server) replacePassword(r *request, current, next string) (string, error) {
	if err := validatePassword("new_password", next); err != nil {
		return "", err
	}
	c, cancel := s.context()
	defer cancel()
	who, stored, err := s.authorizeWithPassword(c, r, current)
	if err != nil {
		return "", err
	}
	newHash, err := s.hashPassword(next)
	if err != nil {
		return "", err
	}
	secret, secretHash := newOwnerSecret(r.cred.AccountID)
	_, err = s.propose(c, &actors.Command{Account: r.cred.AccountID, At: s.now().UnixNano(), Principal: who.Principal,
		Payload: &actors.ChangePassword{ExpectedPasswordHash: stored, NewPasswordHash: newHash, NewOwnerSecretHash: &secretHash}})
	if err != nil {
		return "", err
	}
	return secret, nil
}

// rotateOwnerSecret replaces the owner secret, shown once in the answer,
// and revokes every key. It needs the current password, so a stolen
// session or secret alone cannot take the account over.
func (s *Server) rotateOwnerSecret(r *request) error {
	if err := s.bearer(r); err != nil {
		return err
	}
	var req struct {
		Current *string `json:"current_password"`
	}
	if err := decodeBody(r.ctx, &req, ownerBodyBytesMax); err != nil {
		return err
	}
	if req.Current == nil {
		return required("current_password")
	}
	secret, err := s.replaceOwnerSecret(r, *req.Current)
	if err != nil {
		return err
	}
	return answer(r.ctx, fasthttp.StatusOK, map[string]string{"owner_secret": secret})
}

// replaceOwnerSecret is an owner-secret rotation by the owner of r's
// credential, for the owner API and the site: it returns the new secret.
func (s *Server) replaceOwnerSecret(r *request, current string) (string, error) {
	c, cancel := s.context()
	defer cancel()
	who, stored, err := s.authorizeWithPassword(c, r, current)
	if err != nil {
		return "", err
	}
	secret, secretHash := newOwnerSecret(r.cred.AccountID)
	_, err = s.propose(c, &actors.Command{Account: r.cred.AccountID, At: s.now().UnixNano(), Principal: who.Principal,
		Payload: &actors.RotateOwnerSecret{NewHash: secretHash, ExpectedPasswordHash: stored}})
	if err != nil {
		return "", err
	}
	return secret, nil
}

// authorizeWithPassword authenticates the owner's bearer credential, then
// checks the current password, and returns the principal and the password
// hash it matched (which the command carries, so a password change that
// commits first makes it fail).
func (s *Server) authorizeWithPassword(c context.Context, r *request, password string) (actors.AuthView, string, error) {
	who, err := s.authorize(c, r)
	if err != nil {
		return actors.AuthView{}, "", err
	}
	stored, err := s.checkOwnerPassword(c, r.ctx, r.cred, password)
	if err != nil {
		return actors.AuthView{}, "", err
	}
	return who, stored, nil
}
