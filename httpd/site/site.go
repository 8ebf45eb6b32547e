package site

import (
	"errors"
	"log/slog"
	"net/url"
	"strconv"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/actors"
	"github.com/addrwatch/addrwatch/httpd/balances"
)

// The owner's site: server-rendered pages on the public listener, beside
// /v1 and /owner/v1. It is a client of the same rules as the owner API: a
// signed-in page runs the owner's queries and commands with the session in
// its cookie, so the site can do nothing the owner API could not.
//
// Every state-changing request is a form POST that must come from one of
// our pages (Origin) and carry the session's form token (CSRF); only then
// is the session looked up. Pages are answered with no-store and a strict
// Content-Security-Policy (render.go).

// siteNotices are the messages a redirect after a change may show, by
// code: the query string never carries text of its own.
var siteNotices = map[string]string{
	"revoked":    "Key revoked. Agents using it are refused from their next request.",
	"grant":      "Grant saved. Agents see the change on their next request.",
	"plan":       "Plan changed.",
	"explorer":   "Block explorer saved: History links to it from now on.",
	"login":      "Login changed. Sign in with the new one from now on.",
	"signed-out": "You are signed out. Your API keys keep working.",
	"expired":    "Your session has ended. Sign in again.",
	"deleted":    "The account and everything in it are deleted, and every API key is revoked.",
}

// DownloadsPrefix is where the site's downloads are.
const DownloadsPrefix = "/downloads"

// Site serves the owner's site. Build it with New and mount its routes
// with Register.
type Site struct {
	store    Store
	owner    Owner
	edge     Edge
	balances balances.Source
	log      *slog.Logger
	now      func() time.Time
	chain    ChainSource
	// flashes remembers the flashes this node opened (flash.go).
	flashes flashOpened
}

// Config wires a Site.
type Config struct {
	// Store is the node the site's queries and commands go to.
	Store Store
	// Owner runs the owner API's operations for the site.
	Owner Owner
	// Edge is the HTTP edge's rules the site follows.
	Edge Edge
	// Balances says what the cards' addresses hold; nil shows every
	// balance as unknown.
	Balances balances.Source
	// Log receives the pages that failed to render (a bug).
	Log *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Chain is the chain source the server reads, as the settings page
	// names it.
	Chain ChainSource
}

// ChainSource names the chain source for the owner: its kind (sim,
// esplora, btcd, electrum), the host it is reached at (never a password),
// the network, and whether it is someone else's server, which learns
// every address the owner watches.
type ChainSource struct {
	Kind       string
	Host       string
	Network    string
	ThirdParty bool
	Tor        bool // reached through --chain-proxy
}

// New builds a Site.
func New(cfg Config) *Site {
	s := &Site{store: cfg.Store, owner: cfg.Owner, edge: cfg.Edge, balances: cfg.Balances, log: cfg.Log, now: cfg.Now, chain: cfg.Chain}
	if s.now == nil {
		s.now = time.Now
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	return s
}

// Router is the part of a router the site adds its routes to.
type Router interface {
	GET(path string, handler fasthttp.RequestHandler)
	POST(path string, handler fasthttp.RequestHandler)
}

// Register adds the site's routes, its assets included, to r.
func (s *Site) Register(r Router) {
	r.GET("/", s.home)
	r.POST("/sign-in", s.signInForm)
	r.POST("/sign-out", s.signedIn(s.signOutForm))
	r.GET("/access", s.signedIn(s.accessPage))
	r.POST("/access/keys", s.signedIn(s.createKeyForm))
	r.GET(keyCreatedPage, s.signedIn(s.keyCreatedShown))
	r.GET("/access/keys/{key_id}/revoke", s.signedIn(s.revokeKeyPage))
	r.POST("/access/keys/{key_id}/revoke", s.signedIn(s.revokeKeyForm))
	r.POST("/access/grants/cards/{id}", s.signedIn(s.grantForm(actors.ResourcePortfolioCard)))
	r.POST("/access/grants/spaces/{id}", s.signedIn(s.grantForm(actors.ResourceSpace)))
	r.GET("/settings", s.signedIn(s.settingsPage))
	r.POST("/settings/plan", s.signedIn(s.planForm))
	r.POST("/settings/login", s.signedIn(s.loginForm))
	r.POST("/settings/password", s.signedIn(s.passwordForm))
	r.POST("/settings/owner-secret", s.signedIn(s.ownerSecretForm))
	r.POST("/settings/explorer", s.signedIn(s.explorerForm))
	r.GET(ownerSecretPage, s.signedIn(s.ownerSecretShown))
	r.GET("/settings/delete", s.signedIn(s.deletePage))
	r.POST("/settings/delete", s.signedIn(s.deleteForm))
	r.GET("/downloads", s.signedIn(s.downloadsPage))
	r.GET(DownloadsPrefix+"/labels.jsonl", s.signedIn(s.labelsDownload))
	r.POST(DownloadsPrefix+"/labels", s.signedIn(s.labelsPreview))
	r.POST(DownloadsPrefix+"/labels/import", s.signedIn(s.labelsConfirm))
	r.GET(labelsReportPage, s.signedIn(s.labelsReport))
	r.GET(DownloadsPrefix+"/history.csv", s.signedIn(func(ctx *fasthttp.RequestCtx, sess *siteSession) {
		s.owner.ServeHistoryCSV(ctx, sess.cred, "")
	}))
	r.GET(DownloadsPrefix+"/history/cards/{card_id}/transactions.csv", s.signedIn(func(ctx *fasthttp.RequestCtx, sess *siteSession) {
		s.owner.ServeHistoryCSV(ctx, sess.cred, pathParam(ctx, "card_id"))
	}))
	s.registerPortfolio(r)
	s.registerHistory(r)
	s.registerSpaces(r)
	s.registerSheet(r)
	s.registerNotifications(r)
	r.GET("/live", s.signedInPassive(s.liveChanges))
	r.GET("/activity", s.signedIn(s.activityPage))
	registerAssets(r)
}

// siteHandler serves a signed-in request.
type siteHandler func(ctx *fasthttp.RequestCtx, sess *siteSession)

// signedIn runs h for a request with a live session. A form post must
// come from our own origin and carry the session's token, or it is refused
// with 403 before the session is even looked up. A missing, guessed or
// expired session reaches nothing: it is sent to the sign-in page, and a
// client that keeps presenting bad ones earns the owner-credential back-off.
func (s *Site) signedIn(h siteHandler) fasthttp.RequestHandler {
	return s.signedInAs(h, false)
}

// signedInPassive is signedIn for the requests a page makes on its own
// (passiveContext): they need the session but do not extend it.
func (s *Site) signedInPassive(h siteHandler) fasthttp.RequestHandler {
	return s.signedInAs(h, true)
}

func (s *Site) signedInAs(h siteHandler, passive bool) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		https := s.edge.IsHTTPS(ctx)
		post := ctx.IsPost()
		if post && !s.sameOrigin(ctx) {
			s.siteForbidden(ctx, "This form was not sent from an addrwatch page, so nothing was changed.")
			return
		}
		cred, token, found := s.siteCredential(ctx)
		if !found {
			s.redirect(ctx, "/?m=expired")
			return
		}
		if post && !tokensEqual(formValue(ctx, csrfField), csrfToken(token)) {
			s.siteForbidden(ctx, "This form is out of date or was not sent from an addrwatch page, so nothing was changed. Reload the page and try again.")
			return
		}
		if err := s.edge.BackOff(ctx, cred.AccountID); err != nil {
			s.siteError(ctx, err)
			return
		}
		who, err := askAs(s, cred, actors.AuthQuery{}, passive)
		if err != nil {
			if refused, isRefusal := errors.AsType[*actors.Error](err); isRefusal && refused.Code == actors.CodeUnauthorized {
				s.edge.CredentialFailed(ctx, cred.AccountID)
				clearSessionCookies(ctx, https)
				s.redirect(ctx, "/?m=expired")
				return
			}
			s.siteError(ctx, s.edge.SpecError(err))
			return
		}
		h(ctx, &siteSession{cred: cred, who: who.Principal, csrf: csrfToken(token), flashKey: flashKey(token), https: https, passive: passive,
			seen: seenOf(ctx, https, cred.AccountID)})
	}
}

// landingPage is where signing in (and "/" when signed in) leads: the
// Portfolio, which shows a new account how to start (portfolio.go). The
// site keeps no return path across sign-in (an expired session always
// starts here), so there is no "next" address to check.
const landingPage = "/portfolio"

// home is the sign-in page, or the Portfolio when signed in.
func (s *Site) home(ctx *fasthttp.RequestCtx) {
	if cred, _, found := s.siteCredential(ctx); found {
		if _, err := s.store.Query(cred, actors.AuthQuery{}, false); err == nil {
			s.redirect(ctx, landingPage)
			return
		}
	}
	s.renderSignIn(ctx, fasthttp.StatusOK, "", siteNotices[string(ctx.QueryArgs().Peek("m"))], "")
}

type signInData struct {
	Token string
	Login string
}

func (s *Site) renderSignIn(ctx *fasthttp.RequestCtx, status int, login, notice, problem string) {
	https := s.edge.IsHTTPS(ctx)
	s.renderPage(ctx, status, "signin", sitePage{Title: "Sign in", Narrow: true, Notice: notice, Problem: problem,
		Data: signInData{Token: signInToken(ctx, https), Login: login}})
}

// signInForm signs in with a login (or an account ID) and a password and
// starts the session cookie.
func (s *Site) signInForm(ctx *fasthttp.RequestCtx) {
	https := s.edge.IsHTTPS(ctx)
	if !s.sameOrigin(ctx) || !signInTokenValid(ctx, https) {
		s.siteForbidden(ctx, "This sign-in form is out of date or was not sent from an addrwatch page. Reload the page and try again.")
		return
	}
	login := string(ctx.PostArgs().Peek("login"))
	password := string(ctx.PostArgs().Peek("password"))
	token, err := s.siteSignIn(ctx, login, password)
	if err != nil {
		s.renderSignIn(ctx, s.edge.Status(err.Code), login, "", err.Message)
		if err.RetryAfter > 0 {
			ctx.Response.Header.Set(fasthttp.HeaderRetryAfter, strconv.Itoa(err.RetryAfter))
		}
		return
	}
	_, signInName := cookieNames(https)
	setCookie(ctx, signInName, "", https, -1)
	setSessionCookie(ctx, token, https)
	s.redirect(ctx, landingPage)
}

// siteSignIn signs in with what the owner typed as the login: an
// account's login, or else an account ID (accounts created without a
// login sign in that way). Either path runs one password hash, and every
// refusal but the back-off reads the same.
func (s *Site) siteSignIn(ctx *fasthttp.RequestCtx, name, password string) (string, *actors.Error) {
	login, accountID := name, ""
	if _, known := s.store.AccountForLogin(name); !known {
		login, accountID = "", name
	}
	token, failure := s.owner.SignIn(ctx, login, accountID, password)
	err := s.typed(failure)
	if err != nil && err.Code != actors.CodeRateLimited {
		return "", actors.Errorf(actors.CodeUnauthorized, "Wrong login or password.")
	}
	return token, err
}

// signOutForm ends this session only: API keys keep working.
func (s *Site) signOutForm(ctx *fasthttp.RequestCtx, sess *siteSession) {
	if _, err := s.siteWrite(sess, &actors.DeleteSession{}); err != nil && err.Code != actors.CodeUnauthorized {
		s.siteError(ctx, err)
		return
	}
	clearSessionCookies(ctx, sess.https)
	s.redirect(ctx, "/?m=signed-out")
}

// siteWrite proposes an owner command as the signed-in session.
func (s *Site) siteWrite(sess *siteSession, p actors.Payload) (actors.Result, *actors.Error) {
	res, err := s.store.Propose(&actors.Command{Account: sess.cred.AccountID, At: s.now().UnixNano(), Principal: sess.who, Payload: p})
	return res, s.typed(err)
}

// typed is the spec error a site page shows for err (nil for nil): the
// site renders errors into its pages, so it holds them typed, converted
// from the API's errors here, once.
func (s *Site) typed(err error) *actors.Error {
	if err == nil {
		return nil
	}
	return s.edge.SpecError(err)
}

// ask runs an owner query as the signed-in session and returns its
// answer, typed.
func ask[T any](s *Site, sess *siteSession, q actors.QueryOf[T]) (T, *actors.Error) {
	v, err := askAs(s, sess.cred, q, sess.passive)
	return v, s.typed(err)
}

// pageReads are the queries a page is drawn from, run in order as the
// session. The first refusal stops the rest, and failed shows it on the
// error page, so a handler checks once, after its last read, rather than
// after each one.
type pageReads struct {
	s    *Site
	sess *siteSession
	err  *actors.Error
}

func (s *Site) reads(sess *siteSession) *pageReads { return &pageReads{s: s, sess: sess} }

// read runs q unless an earlier read was refused, and returns its answer.
func read[T any](r *pageReads, q actors.QueryOf[T]) T {
	var v T
	if r.err == nil {
		v, r.err = ask(r.s, r.sess, q)
	}
	return v
}

// layout reads the access panel: the account's keys and resources, and
// the layout's fields of a page in section nav, with the notification
// centre's badge.
func (r *pageReads) layout(nav string) (actors.AccessPanelView, sitePage) {
	v := read(r, actors.AccessPanelQuery{})
	unseen := read(r, actors.ChainUnseenQuery{Seen: r.sess.seen})
	page := sitePage{Nav: nav, Signed: true, CSRF: r.sess.csrf, AccountID: v.AccountID, Login: v.Login, Plan: v.Plan.String(),
		LiveCursor: v.AuditSeq, ChainCursor: unseen.Latest}
	if unseen.Count > 0 {
		page.Unseen = badgeText(unseen.Count)
	}
	return v, page
}

// failed shows the first refusal on the error page and reports whether
// there was one.
func (r *pageReads) failed(ctx *fasthttp.RequestCtx) bool {
	if r.err == nil {
		return false
	}
	r.s.siteError(ctx, r.err)
	return true
}

// askAs runs q for cred and returns its answer as the type q declares
// (actors.QueryOf), so no handler asserts a result's type.
func askAs[T any](s *Site, cred actors.Credential, q actors.QueryOf[T], passive bool) (T, error) {
	return actors.Answer[T](s.store.Query(cred, q, passive))
}

// pathParam returns a path parameter as a string.
func pathParam(ctx *fasthttp.RequestCtx, name string) string {
	v, _ := ctx.UserValue(name).(string)
	return v
}

// redirect answers 303 See Other, so a form post is never re-sent by a
// reload.
func (s *Site) redirect(ctx *fasthttp.RequestCtx, to string) {
	siteHeaders(ctx)
	ctx.Response.Header.Set(fasthttp.HeaderLocation, to)
	ctx.SetStatusCode(fasthttp.StatusSeeOther)
}

// siteForbidden refuses a cross-site or stale form with 403.
func (s *Site) siteForbidden(ctx *fasthttp.RequestCtx, text string) {
	s.renderPage(ctx, fasthttp.StatusForbidden, "message", sitePage{Title: "Nothing was changed", Narrow: true,
		Data: messageData{Text: text, Link: "/", LinkText: "Go to addrwatch"}})
}

// siteError shows an error the owner cannot fix on the page they were on.
func (s *Site) siteError(ctx *fasthttp.RequestCtx, failure error) {
	err := s.edge.SpecError(failure)
	if err.RetryAfter > 0 {
		ctx.Response.Header.Set(fasthttp.HeaderRetryAfter, strconv.Itoa(err.RetryAfter))
	}
	s.renderPage(ctx, s.edge.Status(err.Code), "message", sitePage{Title: "That did not work", Narrow: true,
		Data: messageData{Text: err.Message, Link: "/", LinkText: "Back"}})
}

// NotFound is the page of an unknown site path: 404, with the site's
// frame (a title, the landmarks) and a way on: the Portfolio for a
// browser with a session cookie (an expired one lands on sign-in from
// there), the sign-in page for any other. The router answers an API
// client's unknown path with the error shape instead (httpd's
// wantsSitePage decides), so only a browser's request for a page gets
// here.
func (s *Site) NotFound(ctx *fasthttp.RequestCtx) {
	link, linkText := s.wayOn(ctx)
	s.renderPage(ctx, fasthttp.StatusNotFound, "message", sitePage{Title: "Page not found", Narrow: true,
		Data: messageData{Text: "There is no page at this address. It may have been mistyped, or what it showed was deleted.", Link: link, LinkText: linkText}})
}

// MethodNotAllowed is the page of a site path that a browser visited
// but that only takes a form's submission (a bookmarked or reloaded
// /sign-out, a result address typed in): 405 with the router's Allow
// header, in the site's frame, with the same way on as NotFound.
func (s *Site) MethodNotAllowed(ctx *fasthttp.RequestCtx) {
	link, linkText := s.wayOn(ctx)
	s.renderPage(ctx, fasthttp.StatusMethodNotAllowed, "message", sitePage{Title: "Nothing to show here", Narrow: true,
		Data: messageData{Text: "This address takes a form's submission and has no page to show. Go back to the page with the form and use it there.", Link: link, LinkText: linkText}})
}

// wayOn is the link of a page that has nothing to show: the Portfolio
// for a browser with a session cookie (an expired one lands on sign-in
// from there), the sign-in page for any other.
func (s *Site) wayOn(ctx *fasthttp.RequestCtx) (link, linkText string) {
	if _, _, found := s.siteCredential(ctx); found {
		return "/portfolio", "Go to your Portfolio"
	}
	return "/", "Go to the sign-in page"
}

type messageData struct {
	Text, Link, LinkText string
}

// siteBaseURL is the root URL the browser used, for the curl the panel
// shows. A Host header with anything but host-name characters is not
// echoed.
func (s *Site) siteBaseURL(ctx *fasthttp.RequestCtx) string {
	scheme := "http"
	if s.edge.IsHTTPS(ctx) {
		scheme = "https"
	}
	host := string(ctx.Host())
	for _, r := range host {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' || r == ':' || r == '[' || r == ']') {
			host = "localhost"
			break
		}
	}
	return (&url.URL{Scheme: scheme, Host: host}).String()
}
