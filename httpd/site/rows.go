package site

import (
	"html"
	"html/template"
	"net/url"
	"strings"

	"github.com/addrwatch/addrwatch/actors"
)

// The two big tables of the API access panel (keys and grants) are built
// here rather than by html/template. A full extended account has about 30
// rows of 20 values each, and html/template runs its escapers through
// reflection on every value: that was 80% of a panel load's CPU (see
// BenchmarkRenderFullAccessPanel and the site scenario in bench/).
//
// The rule that keeps this safe is the one html/template applies: every
// value goes through html.EscapeString (which escapes < > & ' "), and every
// value sits either in element text or inside a double-quoted attribute,
// where that escaping is complete. IDs in URLs are path-escaped first. No
// value ever lands in a script, a style, an unquoted attribute or an
// attribute that takes a URL scheme. TestPanelRowsKeepHostileStringsText
// parses the output and checks each hostile value comes back as text.

// esc escapes a value for element text or a double-quoted attribute.
func esc(b *strings.Builder, s string) { b.WriteString(html.EscapeString(s)) }

// pathEsc escapes an ID for a URL path segment inside an attribute.
func pathEsc(b *strings.Builder, id string) { esc(b, url.PathEscape(id)) }

// keyRowsHTML is the body of the keys table.
func keyRowsHTML(keys []keyRow) template.HTML {
	var b strings.Builder
	b.Grow(len(keys) * 600)
	for _, k := range keys {
		b.WriteString("<tr>\n<td class=\"text\">")
		if k.Name != "" {
			esc(&b, k.Name)
		} else {
			b.WriteString(`<span class="hint">(no name)</span>`)
		}
		b.WriteString("</td>\n<td><span class=\"badge ")
		b.WriteString(k.Capability.String())
		b.WriteString(`">`)
		b.WriteString(k.Capability.String())
		b.WriteString("</span></td>\n<td class=\"mono\">")
		esc(&b, k.Prefix)
		b.WriteString("</td>\n<td>")
		esc(&b, k.Created)
		b.WriteString("</td>\n<td>")
		esc(&b, k.LastUsed)
		b.WriteString("</td>\n<td><a href=\"/activity?key=")
		esc(&b, url.QueryEscape(k.ID))
		b.WriteString(`">Activity<span class="visually-hidden"> of key `)
		esc(&b, k.Name)
		b.WriteString("</span></a> <a class=\"button danger\" href=\"/access/keys/")
		pathEsc(&b, k.ID)
		b.WriteString(`/revoke">Revoke<span class="visually-hidden"> key `)
		esc(&b, k.Name)
		b.WriteString("</span></a></td>\n</tr>\n")
	}
	return template.HTML(b.String())
}

// grantRowsHTML is the body of the grants table.
func grantRowsHTML(rows []grantRow) template.HTML {
	var b strings.Builder
	b.Grow(len(rows) * 1200)
	for _, r := range rows {
		b.WriteString("<tr>\n<td class=\"text\">\n<strong>")
		if r.Name != "" {
			esc(&b, r.Name)
		} else {
			b.WriteString("(no name)")
		}
		b.WriteString("</strong><br>\n<span class=\"hint\">")
		esc(&b, r.KindLabel)
		b.WriteString(` · <span class="mono">`)
		esc(&b, r.Detail)
		b.WriteString("</span></span>\n")
		if r.HiddenByPlan {
			b.WriteString("<br><span class=\"badge warn\">hidden by the plan: no one can reach it until you upgrade</span>\n")
		}
		if r.GrantCleared {
			b.WriteString("<br><span class=\"badge warn\">grant cleared when the Space type changed; grant it again</span>\n")
		}
		b.WriteString("</td>\n<td>\n<form class=\"inline\" method=\"post\" action=\"")
		esc(&b, r.Action)
		b.WriteString("\">\n<input type=\"hidden\" name=\"csrf\" value=\"")
		esc(&b, r.CSRF)
		b.WriteString("\">\n<label for=\"grant-")
		esc(&b, r.ID)
		b.WriteString(`" class="visually-hidden">Grant on `)
		esc(&b, r.KindLabel)
		b.WriteString(" ")
		esc(&b, r.Name)
		b.WriteString("</label>\n<select id=\"grant-")
		esc(&b, r.ID)
		b.WriteString("\" name=\"level\" data-autosubmit>\n")
		for _, l := range siteLevels {
			b.WriteString(`<option value="`)
			b.WriteString(l.String())
			b.WriteString(`"`)
			if l == r.Grant {
				b.WriteString(" selected")
			}
			b.WriteString(">")
			b.WriteString(l.String())
			b.WriteString("</option>")
		}
		b.WriteString("\n</select>\n<button type=\"submit\" class=\"quiet\">Save<span class=\"visually-hidden\"> grant on ")
		esc(&b, r.Name)
		b.WriteString("</span></button>\n</form>\n</td>\n")
		for _, sees := range []actors.Level{r.ReadSees, r.WriteSees} {
			b.WriteString(`<td><span class="badge `)
			b.WriteString(sees.String())
			b.WriteString(`">`)
			b.WriteString(sees.String())
			b.WriteString("</span></td>\n")
		}
		b.WriteString("</tr>\n")
	}
	return template.HTML(b.String())
}
