package site

import (
	"io"

	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/httpd/views"
)

// The site's buttons for wallet labels: the BIP-329 export as a download,
// and an import from a file the owner picks, answered with its report.

// labelsFileField is the import form's file input.
const labelsFileField = "file"

// formValue is a form field of a POST, whether the form was sent
// url-encoded or, as a file upload is, as multipart/form-data.
func formValue(ctx *fasthttp.RequestCtx, name string) string {
	if v := ctx.PostArgs().Peek(name); len(v) > 0 {
		return string(v)
	}
	if form, err := ctx.MultipartForm(); err == nil && len(form.Value[name]) > 0 {
		return form.Value[name][0]
	}
	return ""
}

func (s *Site) labelsDownload(ctx *fasthttp.RequestCtx, sess *siteSession) {
	if err := s.owner.ServeLabels(ctx, sess.cred); err != nil {
		s.siteError(ctx, err)
	}
}

// labelsReportData is the import report page's.
type labelsReportData struct {
	Report any // the owner API's import report
}

func (s *Site) labelsImportForm(ctx *fasthttp.RequestCtx, sess *siteSession) {
	file, problem := uploadedLabelFile(ctx)
	if problem != "" {
		s.renderPage(ctx, fasthttp.StatusUnprocessableEntity, "message", sitePage{Title: "Nothing was imported", Narrow: true,
			Data: messageData{Text: problem, Link: "/downloads", LinkText: "Back to Downloads"}})
		return
	}
	report, failure := s.owner.ImportLabels(sess.cred, file)
	if err := s.typed(failure); err != nil {
		s.renderPage(ctx, s.edge.Status(err.Code), "message", sitePage{Title: "Nothing was imported", Narrow: true,
			Data: messageData{Text: err.Message, Link: "/downloads", LinkText: "Back to Downloads"}})
		return
	}
	r := s.reads(sess)
	_, page := r.layout("downloads")
	if r.failed(ctx) {
		return
	}
	page.Title, page.Data = "Labels imported", labelsReportData{Report: report}
	s.renderPage(ctx, fasthttp.StatusOK, "labels_report", page)
}

// uploadedLabelFile reads the file of the import form, or says what is
// wrong with the form.
func uploadedLabelFile(ctx *fasthttp.RequestCtx) ([]byte, string) {
	form, err := ctx.MultipartForm()
	if err != nil || len(form.File[labelsFileField]) == 0 {
		return nil, "Choose a label file (BIP-329, .jsonl) to import."
	}
	header := form.File[labelsFileField][0]
	if header.Size > views.LabelFileBytesMax {
		return nil, "That file is larger than a label file may be (2 MiB)."
	}
	f, err := header.Open()
	if err != nil {
		return nil, "The file could not be read. Try again."
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, views.LabelFileBytesMax+1))
	if err != nil || len(data) > views.LabelFileBytesMax {
		return nil, "The file could not be read whole. Try again."
	}
	return data, ""
}
