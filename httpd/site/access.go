package site

import (
	"html/template"
	"net/url"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/actors"
)

// The API access panel: keys (list, create, revoke) and the grants table.

// siteLevels are the grant levels in the order the menus list them.
var siteLevels = []actors.Level{actors.LevelNone, actors.LevelRead, actors.LevelWrite}

type keyRow struct {
	ID         string
	Name       string
	Capability actors.Level
	Prefix     string
	Created    string
	LastUsed   string
}

// grantRow is one row of the grants table. It copies the fields of
// actors.PanelResource it shows rather than embedding it: text/template
// finds a promoted field through reflect's slow search of embedded
// structs on every use, which was a sixth of a full panel's render time.
type grantRow struct {
	ID           string
	Name         string
	Detail       string
	HiddenByPlan bool
	GrantCleared bool
	KindLabel    string
	Action       string
	CSRF         string
	Grant        actors.Level
	ReadSees     actors.Level
	WriteSees    actors.Level
}

// accessData is the panel page's own data; its tables come pre-rendered
// (rows.go).
type accessData struct {
	HasKeys   bool
	KeyRows   template.HTML
	HasGrants bool
	GrantRows template.HTML
	NameMax   int
	// Full: the account holds the most keys it may, so Limit replaces
	// the create form.
	Full  bool
	Limit limitShown
}

func (s *Site) accessPage(ctx *fasthttp.RequestCtx, sess *siteSession) {
	s.renderAccess(ctx, sess, fasthttp.StatusOK, "")
}

// renderAccess renders the panel, with problem when a form failed.
func (s *Site) renderAccess(ctx *fasthttp.RequestCtx, sess *siteSession, status int, problem string) {
	s.renderAccessAfter(ctx, sess, status, problem, false)
}

// renderAccessAfter is renderAccess; keyRefused says a key's creation
// was refused, which the limit of keys answers in the limit's words.
func (s *Site) renderAccessAfter(ctx *fasthttp.RequestCtx, sess *siteSession, status int, problem string, keyRefused bool) {
	r := s.reads(sess)
	v, page := r.layout("access")
	if r.failed(ctx) {
		return
	}
	d := newAccessData(v, sess.csrf)
	if keyRefused && d.Full {
		problem = "The key was not created. " + d.Limit.String()
	}
	page.Title, page.Data, page.Problem = "API access", d, problem
	page.Notice = siteNotices[string(ctx.QueryArgs().Peek("m"))]
	s.renderPage(ctx, status, "access", page)
}

// newAccessData turns the panel's view into the template's rows; csrf is
// the session's form token, which every grant form carries.
func newAccessData(v actors.AccessPanelView, csrf string) accessData {
	keys := make([]keyRow, 0, len(v.Keys))
	for _, k := range v.Keys {
		keys = append(keys, keyRow{ID: k.KeyID, Name: k.Name, Capability: k.Capability, Prefix: k.KeyID,
			Created: siteTime(k.CreatedAt), LastUsed: siteLastUsed(k)})
	}
	grants := make([]grantRow, 0, len(v.Cards)+len(v.Spaces))
	row := func(r actors.PanelResource, kind, path string) grantRow {
		return grantRow{ID: r.ID, Name: r.Name, Detail: r.Detail, HiddenByPlan: r.HiddenByPlan, GrantCleared: r.GrantCleared,
			KindLabel: kind, Action: "/access/grants/" + path + "/" + url.PathEscape(r.ID), CSRF: csrf,
			Grant: r.Grant, ReadSees: r.ReadKeySees, WriteSees: r.WriteKeySees}
	}
	for _, c := range v.Cards {
		grants = append(grants, row(c, "Account card", "cards"))
	}
	for _, sp := range v.Spaces {
		grants = append(grants, row(sp, "Space", "spaces"))
	}
	d := accessData{HasKeys: len(keys) > 0, KeyRows: keyRowsHTML(keys), HasGrants: len(grants) > 0,
		GrantRows: grantRowsHTML(grants), NameMax: actors.KeyNameCharsMax, Full: len(keys) >= actors.KeysMax, Limit: keysLimit(len(keys))}
	d.Limit.ID = "keys-limit"
	return d
}

// siteTime renders an RFC 3339 time from a view for people, in UTC.
func siteTime(rfc3339 string) string {
	t, err := time.Parse(time.RFC3339Nano, rfc3339)
	if err != nil {
		return rfc3339
	}
	return t.UTC().Format("2006-01-02 15:04 UTC")
}

type keyCreatedData struct {
	Name       string
	Capability actors.Level
	Key        string
	Curl       string
	// Gone: the key was shown already (or its page was opened without
	// one), so the page says what to do instead.
	Gone bool
}

// keyCreatedPage is where a created key is shown: the GET the creation
// redirects to.
const keyCreatedPage = "/access/keys/created"

// createKeyForm creates a key and redirects to the page that shows it,
// once: the key travels in a flash (flash.go), never in a URL, and a
// reload of that page creates nothing.
func (s *Site) createKeyForm(ctx *fasthttp.RequestCtx, sess *siteSession) {
	args := ctx.PostArgs()
	capability, known := actors.ParseLevel(string(args.Peek("capability")))
	if !known || capability == actors.LevelNone {
		s.renderAccess(ctx, sess, fasthttp.StatusUnprocessableEntity, "Pick a capability: read or write.")
		return
	}
	created, failure := s.owner.CreateKey(sess.cred, capability, string(args.Peek("name")))
	if err := s.typed(failure); err != nil {
		s.renderAccessAfter(ctx, sess, s.edge.Status(err.Code), err.Message, true)
		return
	}
	s.setFlash(ctx, sess, keyCreatedPage, created)
}

// keyCreatedShown shows the key the creation put in the flash, or, on a
// reload, that it was shown once.
func (s *Site) keyCreatedShown(ctx *fasthttp.RequestCtx, sess *siteSession) {
	r := s.reads(sess)
	_, page := r.layout("access")
	if r.failed(ctx) {
		return
	}
	var k CreatedKey
	if !s.takeFlash(ctx, sess, &k) {
		page.Title, page.Data = "Key shown once", keyCreatedData{Gone: true}
		s.renderPage(ctx, fasthttp.StatusOK, "key_created", page)
		return
	}
	page.Title = "Key created"
	page.Data = keyCreatedData{Name: k.Name, Capability: k.Capability, Key: k.Key,
		Curl: "curl -sS -H 'Authorization: Bearer " + k.Key + "' '" + s.siteBaseURL(ctx) + "/v1/me'"}
	s.renderPage(ctx, fasthttp.StatusOK, "key_created", page)
}

// keyOf finds the key named by the path in the panel.
func (s *Site) keyOf(ctx *fasthttp.RequestCtx, sess *siteSession) (keyRow, sitePage, bool) {
	r := s.reads(sess)
	v, page := r.layout("access")
	if r.failed(ctx) {
		return keyRow{}, page, false
	}
	id := pathParam(ctx, "key_id")
	for _, k := range v.Keys {
		if k.KeyID == id {
			return keyRow{ID: k.KeyID, Name: k.Name, Capability: k.Capability, Prefix: k.KeyID}, page, true
		}
	}
	s.siteError(ctx, actors.Errorf(actors.CodeNotFound, "That key does not exist or was already revoked."))
	return keyRow{}, page, false
}

// revokeKeyPage asks for confirmation before revoking.
func (s *Site) revokeKeyPage(ctx *fasthttp.RequestCtx, sess *siteSession) {
	key, page, found := s.keyOf(ctx, sess)
	if !found {
		return
	}
	page.Title, page.Data = "Revoke a key", key
	s.renderPage(ctx, fasthttp.StatusOK, "revoke", page)
}

func (s *Site) revokeKeyForm(ctx *fasthttp.RequestCtx, sess *siteSession) {
	if _, err := s.siteWrite(sess, &actors.RevokeKey{KeyID: pathParam(ctx, "key_id")}); err != nil {
		s.siteError(ctx, err)
		return
	}
	s.redirect(ctx, "/access?m=revoked")
}

// grantForm sets one grant from its row of the table.
func (s *Site) grantForm(resource actors.ResourceKind) siteHandler {
	return func(ctx *fasthttp.RequestCtx, sess *siteSession) {
		level, known := actors.ParseLevel(string(ctx.PostArgs().Peek("level")))
		if !known {
			s.renderAccess(ctx, sess, fasthttp.StatusUnprocessableEntity, "A grant is none, read or write.")
			return
		}
		if _, err := s.siteWrite(sess, &actors.SetGrant{Resource: resource, ID: pathParam(ctx, "id"), Level: level}); err != nil {
			s.renderAccess(ctx, sess, s.edge.Status(err.Code), err.Message)
			return
		}
		s.redirect(ctx, "/access?m=grant")
	}
}

// siteLastUsed renders a key's last use, which is recorded to the minute.
func siteLastUsed(k actors.KeyView) string {
	if k.LastUsedAt == nil {
		return "never"
	}
	return siteTime(*k.LastUsedAt)
}
