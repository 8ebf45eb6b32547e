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
	s.registerOperations(routes{add: r, s: s, aud: audienceOwner, owner: s.owner}, r)
}

// ownerOperations are the owner API's own: sessions, keys, grants, the
// plan, the password and owner secret, and the account.
var ownerOperations = []operation{
	{id: "signIn", method: fasthttp.MethodPost, path: "/sessions", apis: ownerAPI,
		request: typeOf[signInRequest](), response: typeOf[sessionCreated](), status: fasthttp.StatusCreated,
		serve: (*Server).signIn},
	{id: "signOut", method: fasthttp.MethodDelete, path: "/sessions/current", apis: ownerAPI, status: fasthttp.StatusNoContent,
		serve: func(s *Server, r *request) error {
			return s.write(r, writeSpec{payload: noBody(&actors.DeleteSession{})})
		}},
	{id: "createKey", method: fasthttp.MethodPost, path: "/keys", apis: ownerAPI,
		request: typeOf[keyCreateRequest](), response: typeOf[KeyCreated](), status: fasthttp.StatusCreated,
		serve: (*Server).createKey},
	{id: "listKeys", method: fasthttp.MethodGet, path: "/keys", apis: ownerAPI,
		response: answerOf(actors.ListKeysQuery{}), status: fasthttp.StatusOK,
		serve: func(s *Server, r *request) error { return s.read(r, actors.ListKeysQuery{}) }},
	{id: "listWatched", method: fasthttp.MethodGet, path: "/watched", apis: ownerAPI,
		response: answerOf(actors.WatchedQuery{}), status: fasthttp.StatusOK,
		serve: func(s *Server, r *request) error { return s.read(r, actors.WatchedQuery{}) }},
	{id: "revokeKey", method: fasthttp.MethodDelete, path: "/keys/{key_id}", apis: ownerAPI, status: fasthttp.StatusNoContent,
		serve: func(s *Server, r *request) error {
			return s.write(r, writeSpec{payload: noBody(&actors.RevokeKey{KeyID: pathParam(r.ctx, "key_id")})})
		}},
	{id: "setCardGrant", method: fasthttp.MethodPut, path: "/grants/portfolio/{card_id}", apis: ownerAPI,
		request: typeOf[grantRequest](), response: typeOf[actors.GrantView](), status: fasthttp.StatusOK,
		serve: setGrant(actors.ResourcePortfolioCard, "card_id")},
	{id: "setSpaceGrant", method: fasthttp.MethodPut, path: "/grants/bookmark-spaces/{space_id}", apis: ownerAPI,
		request: typeOf[grantRequest](), response: typeOf[actors.GrantView](), status: fasthttp.StatusOK,
		serve: setGrant(actors.ResourceSpace, "space_id")},
	{id: "setPlan", method: fasthttp.MethodPut, path: "/plan", apis: ownerAPI,
		request: typeOf[planRequest](), response: typeOf[actors.PlanView](), status: fasthttp.StatusOK,
		serve: func(s *Server, r *request) error {
			return s.write(r, writeSpec{payload: func(ctx *fasthttp.RequestCtx, _ string) (actors.Payload, error) {
				var req planRequest
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
		}},
	{id: "changePassword", method: fasthttp.MethodPost, path: "/password", apis: ownerAPI,
		request: typeOf[passwordRequest](), response: typeOf[ownerSecretView](), status: fasthttp.StatusOK,
		serve: (*Server).changePassword},
	{id: "rotateOwnerSecret", method: fasthttp.MethodPost, path: "/owner-secret", apis: ownerAPI,
		request: typeOf[ownerSecretRequest](), response: typeOf[ownerSecretView](), status: fasthttp.StatusOK,
		serve: (*Server).rotateOwnerSecret},
	{id: "deleteAccount", method: fasthttp.MethodDelete, path: "/account", apis: ownerAPI,
		request: typeOf[accountDeleteRequest](), status: fasthttp.StatusNoContent,
		serve: (*Server).deleteAccount},
}

type planRequest struct {
	Plan *string `json:"plan"`
}

type grantRequest struct {
	Level *string `json:"level"`
}

type keyCreateRequest struct {
	Capability *string `json:"capability"`
	Name       *string `json:"name"`
}

type passwordRequest struct {
	Current *string `json:"current_password"`
	New     *string `json:"new_password"`
}

type ownerSecretRequest struct {
	Current *string `json:"current_password"`
}

// ownerSecretView is the answer of a password change and of an
// owner-secret rotation: the new owner secret, shown once.
type ownerSecretView struct {
	OwnerSecret string `json:"owner_secret"`
}

// noBody is the payload builder of a route whose request has no body.
func noBody(p actors.Payload) func(*fasthttp.RequestCtx, string) (actors.Payload, error) {
	return func(*fasthttp.RequestCtx, string) (actors.Payload, error) { return p, nil }
}

func setGrant(resource actors.ResourceKind, param string) func(*Server, *request) error {
	return func(s *Server, r *request) error {
		return s.write(r, writeSpec{payload: func(ctx *fasthttp.RequestCtx, _ string) (actors.Payload, error) {
			var req grantRequest
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
	var req keyCreateRequest
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
	var req passwordRequest
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
	return answer(r.ctx, fasthttp.StatusOK, ownerSecretView{OwnerSecret: secret})
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
	var req ownerSecretRequest
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
	return answer(r.ctx, fasthttp.StatusOK, ownerSecretView{OwnerSecret: secret})
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
	stored, err := s.checkOwnerPassword(c, r, r.cred, password)
	if err != nil {
		return actors.AuthView{}, "", err
	}
	return who, stored, nil
}
