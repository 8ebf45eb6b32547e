package httpd

import (
	"bytes"
	"html"
	"mime/multipart"
	"net"
	"regexp"
	"strings"
	"testing"

	"github.com/addrwatch/addrwatch/httpd/site"
	"github.com/valyala/fasthttp"
)

// uploadLabels posts the Downloads page's import form with file, and the
// form token csrf, as a browser sends a file: multipart/form-data. The
// answer is the preview.
func (c *siteClient) uploadLabels(csrf, file string) siteAnswer {
	c.o.t.Helper()
	fields := map[string]string{}
	if csrf != "" {
		fields["csrf"] = csrf
	}
	return c.multipart(site.DownloadsPrefix+"/labels", fields, file)
}

// multipart posts fields (and file, when not "") as multipart/form-data.
func (c *siteClient) multipart(path string, fields map[string]string, file string) siteAnswer {
	c.o.t.Helper()
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	for k, v := range fields {
		w.WriteField(k, v)
	}
	if file != "" {
		part, _ := w.CreateFormFile("file", "wallet.jsonl")
		part.Write([]byte(file))
	}
	w.Close()
	var req fasthttp.Request
	req.Header.SetMethod("POST")
	req.SetRequestURI(path)
	req.Header.SetHost(siteTestHost)
	for k, v := range c.cookies {
		req.Header.SetCookie(k, v)
	}
	req.Header.SetContentType(w.FormDataContentType())
	req.Header.Set("Origin", c.origin)
	req.SetBody(body.Bytes())
	ctx := &fasthttp.RequestCtx{}
	ctx.Init(&req, &net.TCPAddr{IP: net.ParseIP(c.ip), Port: 40000}, nil)
	c.o.handler(ctx)
	a := siteAnswer{status: ctx.Response.StatusCode(), body: string(ctx.Response.Body()), location: string(ctx.Response.Header.Peek(fasthttp.HeaderLocation)),
		cookies: map[string]*fasthttp.Cookie{}}
	for key, value := range ctx.Response.Header.Cookies() {
		ck := &fasthttp.Cookie{}
		if err := ck.ParseBytes(value); err == nil {
			a.cookies[string(key)] = ck
			c.cookies[string(key)] = string(ck.Value())
		}
	}
	return a
}

var hiddenField = regexp.MustCompile(`<input type="hidden" name="([a-z]+)" value="([^"]*)">`)

// confirmImport sends the preview's confirmation form as the browser
// would and follows its redirect to the report.
func (c *siteClient) confirmImport(preview siteAnswer) (report, post siteAnswer) {
	c.o.t.Helper()
	fields := map[string]string{}
	for _, m := range hiddenField.FindAllStringSubmatch(preview.body[strings.Index(preview.body, `id="confirm-import"`):], -1) {
		fields[m[1]] = html.UnescapeString(m[2])
	}
	post = c.multipart(site.DownloadsPrefix+"/labels/import", fields, "")
	if post.status != fasthttp.StatusSeeOther {
		return post, post
	}
	return c.do("GET", post.location, nil), post
}

func TestSiteImportsALabelFileWithItsToken(t *testing.T) {
	t.Parallel()
	o := newOwnerTest(t)
	c := newSiteClient(o)
	c.mustSignIn()
	token := formToken(t, c.do("GET", "/downloads", nil))
	file := labelFileLine("addr", csvAddrA, `<img src=x onerror=alert(1)>`) + labelFileLine("<script>", "<b>ref</b>", "x")
	if a := c.uploadLabels("", file); a.status != fasthttp.StatusForbidden {
		t.Fatalf("an upload without the form token: %d", a.status)
	}
	if a := c.uploadLabels(strings.Repeat("a", len(token)), file); a.status != fasthttp.StatusForbidden {
		t.Fatalf("an upload with a wrong token: %d", a.status)
	}
	if got := c.do("GET", site.DownloadsPrefix+"/labels.jsonl", nil).body; got != "" {
		t.Fatalf("refused uploads imported %q", got)
	}
	// The upload previews: nothing is saved yet.
	preview := c.uploadLabels(token, file)
	if preview.status != 200 || !strings.Contains(preview.body, "<strong>1 new</strong>") || !strings.Contains(preview.body, "Import 1 line") {
		t.Fatalf("the preview: %d %.500s", preview.status, preview.body)
	}
	if strings.Contains(preview.body, "<script>") || strings.Contains(preview.body, "<b>ref") || !strings.Contains(preview.body, "&lt;b&gt;ref&lt;/b&gt;") {
		t.Fatalf("the preview does not escape what the file said: %s", preview.body)
	}
	if got := c.do("GET", site.DownloadsPrefix+"/labels.jsonl", nil).body; got != "" {
		t.Fatalf("the preview imported %q", got)
	}
	// Confirming imports and redirects to the report, shown once.
	report, post := c.confirmImport(preview)
	checkFlashRedirect(t, "confirm an import", post, "/downloads/labels/report")
	if report.status != 200 || !strings.Contains(report.body, "<strong>1 imported</strong>") || !strings.Contains(report.body, "Every line went as the preview said") {
		t.Fatalf("the report: %d %.1500s", report.status, report.body)
	}
	exported := c.do("GET", site.DownloadsPrefix+"/labels.jsonl", nil)
	if exported.status != 200 || !strings.Contains(exported.body, `"label":"<img src=x onerror=alert(1)>"`) {
		t.Fatalf("the site's export: %d %q", exported.status, exported.body)
	}
	if again := c.do("GET", "/downloads/labels/report", nil); !strings.Contains(again.body, "was shown once. Nothing was imported again") {
		t.Fatalf("the report reloaded: %.1500s", again.body)
	}
	if got := c.do("GET", site.DownloadsPrefix+"/labels.jsonl", nil).body; got != exported.body {
		t.Fatalf("the reload changed the labels: %q", got)
	}
	// The same file again: the preview says it changes nothing and
	// offers no import.
	if a := c.uploadLabels(token, file); !strings.Contains(a.body, "Importing this file changes nothing") || strings.Contains(a.body, `id="confirm-import"`) {
		t.Fatalf("the same file again: %.1500s", a.body)
	}
}

func TestSiteLabelImportWithoutAFileSaysSo(t *testing.T) {
	t.Parallel()
	o := newOwnerTest(t)
	c := newSiteClient(o)
	c.mustSignIn()
	a := c.post("/downloads", site.DownloadsPrefix+"/labels", nil)
	if a.status != fasthttp.StatusUnprocessableEntity || !strings.Contains(a.body, "Choose a label file") {
		t.Fatalf("a form without a file: %d %.300s", a.status, a.body)
	}
}

// The report lists a line that did not go as previewed (here its Space
// became an altcoin Space in between) under its number in the owner's file, though
// the confirmation sends back only the lines that change something.
func TestSiteLabelReportNamesTheLinesThatWentOtherwise(t *testing.T) {
	t.Parallel()
	o := newOwnerTest(t)
	c := newSiteClient(o)
	c.mustSignIn()
	token := formToken(t, c.do("GET", "/downloads", nil))
	space := o.ownerJSON("GET", "/owner/v1/bookmark-spaces", nil, 200)["spaces"].([]any)[0].(map[string]any) // the account's one Space
	file := labelFileLine("pubkey", "02ab", "not kept") + "\n" + labelFileLine("addr", someAddress(t, 1), "Account") +
		string(appendLabelLine(nil, "addr", someAddress(t, 2), "in the Space", space["id"].(string)))
	preview := c.uploadLabels(token, file)
	if !strings.Contains(preview.body, "<strong>2 new</strong>") || !strings.Contains(preview.body, `name="numbers" value="3,4"`) {
		t.Fatalf("the preview: %.3000s", preview.body)
	}
	now := o.ownerJSON("GET", "/owner/v1/bookmark-spaces", nil, 200)["bookmark_revision"]
	o.ownerJSON("PATCH", "/owner/v1/bookmark-spaces/"+space["id"].(string), map[string]any{"expected_bookmark_revision": now, "type": "altcoin"}, 200)
	report, _ := c.confirmImport(preview)
	if !strings.Contains(report.body, "<strong>1 imported</strong>") || !strings.Contains(report.body, "<td>4</td>") || !strings.Contains(report.body, "is not a Bitcoin Space (its type is altcoin)") {
		t.Fatalf("the report: %.3000s", report.body)
	}
}
