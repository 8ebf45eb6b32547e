package site

import (
	"encoding/json"
	"io"
	"strconv"
	"strings"

	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/httpd/views"
)

// The site's buttons for wallet labels: the BIP-329 export as a download,
// and an import from a file the owner picks: previewed, confirmed, then
// reported.

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

// An import is previewed before anything is saved. The file's form posts
// to labelsPreview, which runs the import as a dry run and shows what it
// would do, line by line; nothing is saved, so that answer may be a POST's
// (a reload previews again). The owner confirms with a form that sends
// back only the lines that change something, re-encoded by the server as
// BIP-329 records with their line numbers, so no file is kept anywhere in
// between. The confirmation imports them and redirects to the report page
// (post/redirect/get), which shows the counts and the lines that did not go
// as previewed from a flash; a reload of it imports nothing.

const (
	// labelsReportPage is the GET an import's confirmation redirects to.
	labelsReportPage = "/downloads/labels/report"
	// labelsConfirmBytesMax bounds the lines a confirmation sends back,
	// within the public listener's body limit with the form around them.
	labelsConfirmBytesMax = views.LabelFileBytesMax - 64<<10
	// labelsFlashLinesBytesMax bounds the lines a report's flash lists, so
	// its cookie stays under the browser's limit.
	labelsFlashLinesBytesMax = 1600
	// labelsFlashReasonMax bounds one listed line's reason.
	labelsFlashReasonMax = 160
)

// labelsPreviewData is the preview page's.
type labelsPreviewData struct {
	Report LabelImport
	// Lines and Numbers are the confirmation's fields: the lines that
	// change something as BIP-329 records, and their line numbers.
	Lines, Numbers string
	// TooBig: those lines do not fit in a confirmation; the page says to
	// split the file.
	TooBig bool
	Count  int // the lines that change something
}

// labelsPreview runs the import of the uploaded file as a dry run and
// shows what it would do.
func (s *Site) labelsPreview(ctx *fasthttp.RequestCtx, sess *siteSession) {
	file, problem := uploadedLabelFile(ctx)
	if problem != "" {
		s.labelsRefused(ctx, fasthttp.StatusUnprocessableEntity, problem)
		return
	}
	report, failure := s.owner.ImportLabels(sess.cred, file, true)
	if err := s.typed(failure); err != nil {
		s.labelsRefused(ctx, s.edge.Status(err.Code), err.Message)
		return
	}
	r := s.reads(sess)
	_, page := r.layout("downloads")
	if r.failed(ctx) {
		return
	}
	d := labelsPreviewData{Report: report}
	var lines []byte
	var numbers []string
	for _, l := range report.Lines {
		if l.Changes {
			lines = appendLabelRecord(lines, l)
			numbers = append(numbers, strconv.Itoa(l.Line))
			d.Count++
		}
	}
	d.Lines, d.Numbers, d.TooBig = string(lines), strings.Join(numbers, ","), len(lines) > labelsConfirmBytesMax
	page.Title, page.Data = "Import preview", d
	s.renderPage(ctx, fasthttp.StatusOK, "labels_preview", page)
}

// appendLabelRecord appends the BIP-329 record of a line the preview will
// send back: its type, canonical ref, label and Space.
func appendLabelRecord(dst []byte, l LabelLine) []byte {
	record := map[string]string{"type": l.Type, "ref": l.Ref, "label": l.Label}
	if l.Space != "" {
		record["addrwatch_space"] = l.Space
	}
	line, _ := json.Marshal(record) // strings only: it cannot fail
	return append(append(dst, line...), '\n')
}

// labelsFlash is an import's report on its way to labelsReportPage: the
// counts, and the lines that did not change what the preview said they
// would (up to labelsFlashLinesBytesMax of them; Unlisted counts the rest).
type labelsFlash struct {
	Imported, Changed, Unchanged, Skipped int
	Lines                                 []LabelLine `json:",omitempty"`
	Unlisted                              int         `json:",omitempty"`
}

// labelsConfirm imports the lines the preview sent back and redirects to
// the report.
func (s *Site) labelsConfirm(ctx *fasthttp.RequestCtx, sess *siteSession) {
	lines, numbers := formValue(ctx, "lines"), strings.Split(formValue(ctx, "numbers"), ",")
	if lines == "" || len(lines) > labelsConfirmBytesMax {
		s.labelsRefused(ctx, fasthttp.StatusUnprocessableEntity, "There is nothing to import in this form. Choose the file again.")
		return
	}
	report, failure := s.owner.ImportLabels(sess.cred, []byte(lines), false)
	if err := s.typed(failure); err != nil {
		s.labelsRefused(ctx, s.edge.Status(err.Code), err.Message)
		return
	}
	f := labelsFlash{Imported: report.Imported, Changed: report.Changed, Unchanged: report.Unchanged, Skipped: report.Skipped}
	listed := 0
	for _, l := range report.Lines {
		if l.Changes {
			continue
		}
		// The line's number in the owner's file, as the preview showed it.
		if i := l.Line - 1; i >= 0 && i < len(numbers) {
			if n, err := strconv.Atoi(numbers[i]); err == nil {
				l.Line = n
			}
		}
		l.Reason, l.Ref, l.Label, l.Space = truncateRunes(l.Reason, labelsFlashReasonMax), truncateRunes(l.Ref, 100), "", ""
		if listed += len(l.Reason) + len(l.Ref) + 64; listed > labelsFlashLinesBytesMax {
			f.Unlisted++
			continue
		}
		f.Lines = append(f.Lines, l)
	}
	s.setFlash(ctx, sess, labelsReportPage, f)
}

// labelsReportData is the report page's.
type labelsReportData struct {
	Report labelsFlash
	// Gone: the report was shown already (a reload): nothing was
	// imported again.
	Gone bool
}

// labelsReport shows an import's report from its flash, once.
func (s *Site) labelsReport(ctx *fasthttp.RequestCtx, sess *siteSession) {
	r := s.reads(sess)
	_, page := r.layout("downloads")
	if r.failed(ctx) {
		return
	}
	var f labelsFlash
	shown := s.takeFlash(ctx, sess, &f)
	page.Title, page.Data = "Labels imported", labelsReportData{Report: f, Gone: !shown}
	s.renderPage(ctx, fasthttp.StatusOK, "labels_report", page)
}

// labelsRefused says why nothing was imported.
func (s *Site) labelsRefused(ctx *fasthttp.RequestCtx, status int, problem string) {
	s.renderPage(ctx, status, "message", sitePage{Title: "Nothing was imported", Narrow: true,
		Data: messageData{Text: problem, Link: "/downloads", LinkText: "Back to Downloads"}})
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
