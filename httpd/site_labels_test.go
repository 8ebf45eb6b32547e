package httpd

import (
	"bytes"
	"mime/multipart"
	"net"
	"strings"
	"testing"

	"github.com/addrwatch/addrwatch/httpd/site"
	"github.com/valyala/fasthttp"
)

// uploadLabels posts the Downloads page's import form with file, and the
// form token csrf, as a browser sends a file: multipart/form-data.
func (c *siteClient) uploadLabels(csrf, file string) siteAnswer {
	c.o.t.Helper()
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	if csrf != "" {
		w.WriteField("csrf", csrf)
	}
	part, _ := w.CreateFormFile("file", "wallet.jsonl")
	part.Write([]byte(file))
	w.Close()
	var req fasthttp.Request
	req.Header.SetMethod("POST")
	req.SetRequestURI(site.DownloadsPrefix + "/labels")
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
	return siteAnswer{status: ctx.Response.StatusCode(), body: string(ctx.Response.Body())}
}

func TestSiteImportsALabelFileWithItsToken(t *testing.T) {
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
	a := c.uploadLabels(token, file)
	if a.status != 200 || !strings.Contains(a.body, "<strong>1 imported</strong>") {
		t.Fatalf("the upload: %d %.500s", a.status, a.body)
	}
	if strings.Contains(a.body, "<script>") || strings.Contains(a.body, "<b>ref") || !strings.Contains(a.body, "&lt;b&gt;ref&lt;/b&gt;") {
		t.Fatalf("the report does not escape what the file said: %s", a.body)
	}
	exported := c.do("GET", site.DownloadsPrefix+"/labels.jsonl", nil)
	if exported.status != 200 || !strings.Contains(exported.body, `"label":"<img src=x onerror=alert(1)>"`) {
		t.Fatalf("the site's export: %d %q", exported.status, exported.body)
	}
	if a := c.uploadLabels(token, file); !strings.Contains(a.body, "1 unchanged") {
		t.Fatalf("the same file again: %.500s", a.body)
	}
}

func TestSiteLabelImportWithoutAFileSaysSo(t *testing.T) {
	o := newOwnerTest(t)
	c := newSiteClient(o)
	c.mustSignIn()
	a := c.post("/downloads", site.DownloadsPrefix+"/labels", nil)
	if a.status != fasthttp.StatusUnprocessableEntity || !strings.Contains(a.body, "Choose a label file") {
		t.Fatalf("a form without a file: %d %.300s", a.status, a.body)
	}
}
