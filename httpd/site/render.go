package site

import (
	"bytes"
	"embed"
	"html/template"
	"io/fs"
	"sync"

	"github.com/valyala/fasthttp"
)

// The site's pages are html/template files and its assets are plain files,
// all embedded in the binary: no build step, no CDN, and the site works
// offline. html/template escapes every value by the context it lands in,
// so a card name or note is always text, never markup.

//go:embed templates/*.html
var siteTemplateFiles embed.FS

//go:embed static
var siteStaticFiles embed.FS

// sitePageNames are the templates that render a whole page inside the
// layout.
var sitePageNames = []string{"signin", "message", "access", "key_created", "revoke", "settings", "secret_shown", "delete", "downloads", "labels_preview", "labels_report", "portfolio", "card", "card_delete", "history", "spaces", "space", "space_delete", "sheet", "activity", "notifications", "channel_secret", "channel_delete", "notify_rule", "deliveries", "centre"}

var (
	sitePagesOnce sync.Once
	sitePages     map[string]*template.Template
)

// sitePageTemplates parses each page with the layout, the balance
// blocks, the notification pages' parts, the label import's rows and the
// plan-limit block (limits.go), once.
func sitePageTemplates() map[string]*template.Template {
	sitePagesOnce.Do(func() {
		sitePages = make(map[string]*template.Template, len(sitePageNames))
		for _, name := range sitePageNames {
			sitePages[name] = template.Must(template.ParseFS(siteTemplateFiles, "templates/layout.html", "templates/balance.html", "templates/notify_parts.html", "templates/labels_parts.html", "templates/limit_parts.html", "templates/"+name+".html"))
		}
	})
	return sitePages
}

// sitePage is what every page template gets: the layout's fields, and the
// page's own in Data.
type sitePage struct {
	Title     string
	Nav       string // the current section: portfolio, access, settings, notifications, centre, …
	Signed    bool
	CSRF      string
	AccountID string
	Login     string
	Plan      string
	Notice    string
	Problem   string
	Narrow    bool
	Data      any
	// LiveCursor is the account's last change when the page was drawn:
	// site.js asks /live for the changes after it (live.go).
	LiveCursor uint64
	// ChainCursor is the account's newest chain event when the page was
	// drawn: site.js redraws the page's live parts when /live names a
	// newer one.
	ChainCursor uint64
	// Unseen is the notification centre's badge: how many chain events
	// came since this browser last opened it ("" for none).
	Unseen string
}

// sitePageBuffers are the buffers pages render into. A full API access
// panel is about 30 KB, and growing a fresh buffer to that size on every
// load was a tenth of its render time; SetBody copies the page out, so
// the buffer can go back at once.
var sitePageBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// sitePageBufferKeepMax is the largest buffer put back in the pool, so
// one unusually big page does not pin its memory for good.
const sitePageBufferKeepMax = 1 << 20

// renderPage writes a page with the site's headers. A template error is a
// bug: it is logged and answered with a plain 500 page.
func (s *Site) renderPage(ctx *fasthttp.RequestCtx, status int, name string, p sitePage) {
	buf := sitePageBuffers.Get().(*bytes.Buffer)
	buf.Reset()
	defer func() {
		if buf.Cap() <= sitePageBufferKeepMax {
			sitePageBuffers.Put(buf)
		}
	}()
	if err := sitePageTemplates()[name].ExecuteTemplate(buf, "layout", p); err != nil {
		s.log.Error("site page failed to render", "page", name, "err", err)
		status = fasthttp.StatusInternalServerError
		buf.Reset()
		buf.WriteString("<!doctype html><title>Error</title><p>This page failed to render. Try again; if it persists, tell the operator.</p>")
	}
	siteHeaders(ctx)
	ctx.SetContentType("text/html; charset=utf-8")
	ctx.SetStatusCode(status)
	ctx.SetBody(buf.Bytes())
}

// contentSecurityPolicy allows only our own script, style and images, no
// inline code of any kind, no framing, and forms posting only to us.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
	"form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// siteHeaders sets the security headers of every site answer. Pages are
// never cached: several show a secret once, and all show account data.
func siteHeaders(ctx *fasthttp.RequestCtx) {
	h := &ctx.Response.Header
	h.Set("Content-Security-Policy", contentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set(fasthttp.HeaderCacheControl, "no-store")
}

// AssetsPrefix is where the site's embedded stylesheet and scripts are:
// the same on every node, so each node serves them itself.
const AssetsPrefix = "/assets/"

// FaviconPath is where a browser looks for a site's icon when a page
// names none (a JSON document, the Markdown guides): the site's icon is
// served there too, so no page's console shows its 404.
const FaviconPath = "/favicon.ico"

// siteAssets are the embedded files the site serves, by name under
// static/, with their content types.
var siteAssets = map[string]string{
	"site.css":    "text/css; charset=utf-8",
	"site.js":     "text/javascript; charset=utf-8",
	"sheet.js":    "text/javascript; charset=utf-8",
	"favicon.svg": "image/svg+xml",
	"favicon.ico": "image/x-icon",
}

// registerAssets serves the embedded stylesheet, scripts and icons, each
// at its own path, so an unknown asset is the router's ordinary 404; the
// ICO icon is at FaviconPath as well.
func registerAssets(r Router) {
	static, _ := fs.Sub(siteStaticFiles, "static")
	for name, contentType := range siteAssets {
		body, err := fs.ReadFile(static, name)
		if err != nil {
			panic("site: asset missing: " + name)
		}
		serve := func(ctx *fasthttp.RequestCtx) {
			siteHeaders(ctx)
			ctx.Response.Header.Set(fasthttp.HeaderCacheControl, "public, max-age=300")
			ctx.SetContentType(contentType)
			ctx.SetBody(body)
		}
		r.GET(AssetsPrefix+name, serve)
		if name == "favicon.ico" {
			r.GET(FaviconPath, serve)
		}
	}
}
