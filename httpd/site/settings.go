package site

import (
	"strings"

	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/actors"
)

// Account settings: plan, login, password, owner secret and deletion, and
// the downloads page. Each action has the effect on keys the spec gives it:
// a password change or an owner-secret rotation revokes every key, a plan
// or login change revokes none.

type settingsData struct {
	HiddenSpaces int // Spaces a downgrade to base would hide now
	Chain        ChainSource
	// Keys are the live API keys, which a password change or an owner
	// secret's rotation revokes: the forms say how many beforehand.
	Keys int
	// Explorer is the block explorer History links to (explorer.go).
	Explorer actors.ExplorerView
}

func (s *Site) settingsPage(ctx *fasthttp.RequestCtx, sess *siteSession) {
	s.renderSettings(ctx, sess, fasthttp.StatusOK, siteNotices[string(ctx.QueryArgs().Peek("m"))], "")
}

func (s *Site) renderSettings(ctx *fasthttp.RequestCtx, sess *siteSession, status int, notice, problem string) {
	r := s.reads(sess)
	v, page := r.layout("settings")
	keys := read(r, actors.ListKeysQuery{})
	explorer := read(r, actors.ExplorerQuery{})
	if r.failed(ctx) {
		return
	}
	page.Title, page.Notice, page.Problem = "Account settings", notice, problem
	page.Data = settingsData{HiddenSpaces: max(0, len(v.Spaces)-1), Chain: s.chain, Keys: len(keys.Keys), Explorer: explorer}
	s.renderPage(ctx, status, "settings", page)
}

func (s *Site) planForm(ctx *fasthttp.RequestCtx, sess *siteSession) {
	plan, known := actors.ParsePlan(string(ctx.PostArgs().Peek("plan")))
	if !known {
		s.renderSettings(ctx, sess, fasthttp.StatusUnprocessableEntity, "", "Pick a plan: base or extended.")
		return
	}
	if _, err := s.siteWrite(sess, &actors.SetPlan{Plan: plan}); err != nil {
		s.renderSettings(ctx, sess, s.edge.Status(err.Code), "", err.Message)
		return
	}
	s.redirect(ctx, "/settings?m=plan")
}

// loginForm sets or changes the login; keys are not affected.
func (s *Site) loginForm(ctx *fasthttp.RequestCtx, sess *siteSession) {
	args := ctx.PostArgs()
	if err := s.owner.ReplaceLogin(ctx, sess.cred, string(args.Peek("login")), string(args.Peek("current_password"))); err != nil {
		s.settingsFailed(ctx, sess, err)
		return
	}
	s.redirect(ctx, "/settings?m=login")
}

type secretShownData struct {
	Text   string
	Secret string
	// Gone: the secret was shown already, so the page says what to do.
	Gone bool
}

// ownerSecretPage is where a new owner secret is shown: the GET a
// password change or a rotation redirects to.
const ownerSecretPage = "/settings/secret"

// ownerSecretFlash is a new owner secret on its way to ownerSecretPage;
// Why is a key of ownerSecretWhy.
type ownerSecretFlash struct {
	Why    string `json:"why"`
	Secret string `json:"secret"`
}

// ownerSecretWhy is the title and the text of each change that makes an
// owner secret.
var ownerSecretWhy = map[string][2]string{
	"password": {"Password changed", "Your password is changed. Every API key is revoked, the old owner secret no longer works, and every other session is signed out."},
	"rotated":  {"Owner secret rotated", "The owner secret is replaced and every API key is revoked."},
}

// passwordForm changes the password. The acting session stays signed in;
// every key, the old owner secret and every other session end.
func (s *Site) passwordForm(ctx *fasthttp.RequestCtx, sess *siteSession) {
	args := ctx.PostArgs()
	next := string(args.Peek("new_password"))
	if next != string(args.Peek("repeat_password")) {
		s.renderSettings(ctx, sess, fasthttp.StatusUnprocessableEntity, "", "The two new passwords differ. Nothing was changed.")
		return
	}
	secret, err := s.owner.ReplacePassword(ctx, sess.cred, string(args.Peek("current_password")), next)
	if err != nil {
		s.settingsFailed(ctx, sess, err)
		return
	}
	s.setFlash(ctx, sess, ownerSecretPage, ownerSecretFlash{Why: "password", Secret: secret})
}

// ownerSecretForm rotates the owner secret; every key is revoked.
func (s *Site) ownerSecretForm(ctx *fasthttp.RequestCtx, sess *siteSession) {
	secret, err := s.owner.ReplaceOwnerSecret(ctx, sess.cred, string(ctx.PostArgs().Peek("current_password")))
	if err != nil {
		s.settingsFailed(ctx, sess, err)
		return
	}
	s.setFlash(ctx, sess, ownerSecretPage, ownerSecretFlash{Why: "rotated", Secret: secret})
}

// ownerSecretShown shows the owner secret in the flash, once; a reload
// says it was shown.
func (s *Site) ownerSecretShown(ctx *fasthttp.RequestCtx, sess *siteSession) {
	var f ownerSecretFlash
	var why [2]string
	shown := s.takeFlash(ctx, sess, &f)
	if shown {
		why, shown = ownerSecretWhy[f.Why]
	}
	if !shown {
		s.showOnce(ctx, sess, "settings", "secret_shown", "Owner secret shown once", secretShownData{Gone: true})
		return
	}
	s.showOnce(ctx, sess, "settings", "secret_shown", why[0], secretShownData{Text: why[1], Secret: f.Secret})
}

// settingsFailed shows a failed settings form. A wrong password says so in
// the owner's words rather than the API's.
func (s *Site) settingsFailed(ctx *fasthttp.RequestCtx, sess *siteSession, failure error) {
	err := s.edge.SpecError(failure)
	problem := err.Message
	if err.Code == actors.CodeUnauthorized {
		problem = "The current password is wrong. Nothing was changed."
	}
	s.renderSettings(ctx, sess, s.edge.Status(err.Code), "", problem)
}

// showOnce renders the page name that shows a secret a change made (data
// holds it, or says it was shown already), in section nav.
func (s *Site) showOnce(ctx *fasthttp.RequestCtx, sess *siteSession, nav, name, title string, data any) {
	r := s.reads(sess)
	_, page := r.layout(nav)
	if r.failed(ctx) {
		return
	}
	page.Title, page.Data = title, data
	s.renderPage(ctx, fasthttp.StatusOK, name, page)
}

type deleteData struct {
	Phrase string
}

// deletePhrase is what the owner types to confirm a deletion: the
// account's login, or its ID when it has none.
func deletePhrase(page sitePage) string {
	if page.Login != "" {
		return page.Login
	}
	return page.AccountID
}

func (s *Site) deletePage(ctx *fasthttp.RequestCtx, sess *siteSession) {
	s.renderDelete(ctx, sess, fasthttp.StatusOK, "")
}

func (s *Site) renderDelete(ctx *fasthttp.RequestCtx, sess *siteSession, status int, problem string) {
	r := s.reads(sess)
	_, page := r.layout("settings")
	if r.failed(ctx) {
		return
	}
	page.Title, page.Problem, page.Data = "Delete the account", problem, deleteData{Phrase: deletePhrase(page)}
	s.renderPage(ctx, status, "delete", page)
}

// deleteForm deletes the account once the owner typed the phrase and the
// current password.
func (s *Site) deleteForm(ctx *fasthttp.RequestCtx, sess *siteSession) {
	r := s.reads(sess)
	_, page := r.layout("settings")
	if r.failed(ctx) {
		return
	}
	args := ctx.PostArgs()
	if !strings.EqualFold(strings.TrimSpace(string(args.Peek("confirm"))), deletePhrase(page)) {
		s.renderDelete(ctx, sess, fasthttp.StatusUnprocessableEntity, "What you typed does not match. Nothing was deleted.")
		return
	}
	current := string(args.Peek("current_password"))
	if current == "" {
		s.renderDelete(ctx, sess, fasthttp.StatusUnprocessableEntity, "Type your current password to delete the account. Nothing was deleted.")
		return
	}
	if err := s.owner.RemoveAccount(ctx, sess.cred, current); err != nil {
		failure := s.edge.SpecError(err)
		problem := failure.Message
		if failure.Code == actors.CodeUnauthorized {
			problem = "The current password is wrong. Nothing was deleted."
		}
		s.renderDelete(ctx, sess, s.edge.Status(failure.Code), problem)
		return
	}
	clearSessionCookies(ctx, sess.https)
	s.redirect(ctx, "/?m=deleted")
}

type downloadsData struct {
	Cards []actors.PanelResource
}

func (s *Site) downloadsPage(ctx *fasthttp.RequestCtx, sess *siteSession) {
	r := s.reads(sess)
	v, page := r.layout("downloads")
	if r.failed(ctx) {
		return
	}
	page.Title, page.Data = "Downloads", downloadsData{Cards: v.Cards}
	s.renderPage(ctx, fasthttp.StatusOK, "downloads", page)
}
