package httpd

import (
	"context"
	"time"
	"unicode/utf8"

	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/actors"
	"github.com/addrwatch/addrwatch/chain"
	"github.com/addrwatch/addrwatch/httpd/site"
)

// Wallet labels: the owner's BIP-329 export and import
// (GET and POST /owner/v1/labels.jsonl, and the site's Downloads page).
//
// An import works line by line, each line at most one command of the
// rules the API already has (an Account card created or renamed, a
// bookmark card of the Space its line names created or renamed, a note
// saved), so a line is taken whole or not at all, and a line the rules
// refuse is reported with the rule's reason. A line that would change
// nothing changes nothing, so importing a file twice changes nothing the
// second time. Nothing here adds a rule: the edge only picks which
// command a line asks for. labels_import.go sends those commands to the
// log in few entries, one import per account at a time.

const (
	labelsPath = ownerPrefix + "/labels.jsonl"
	// labelImportBudget bounds the time one import works. A follower
	// relays an answer only within httpd/forward's forwardTimeout (30 s);
	// lines not reached are reported, and importing the file again goes
	// on where it stopped, since what was imported is then unchanged.
	labelImportBudget = 25 * time.Second
	// labelRefEchoMax bounds how much of a line's ref the report repeats.
	labelRefEchoMax = 100
)

// The outcomes of a line.
const (
	labelImported  = "imported"  // a new card, or a new note
	labelChanged   = "changed"   // a card renamed, or a note replaced
	labelUnchanged = "unchanged" // the account already held this label
	labelSkipped   = "skipped"   // nothing changed; reason says why
)

// labelImportReport is the answer to an import.
type labelImportReport struct {
	// DryRun: nothing was saved; the outcomes are what an import of the
	// file would do now.
	DryRun    bool                `json:"dry_run,omitempty"`
	Records   int                 `json:"records"` // lines that are not blank
	Imported  int                 `json:"imported"`
	Changed   int                 `json:"changed"`
	Unchanged int                 `json:"unchanged"`
	Skipped   int                 `json:"skipped"`
	Results   []labelImportResult `json:"results"` // one per line that is not blank, in file order
}

type labelImportResult struct {
	Line    int    `json:"line"`
	Type    string `json:"type,omitempty"`
	Ref     string `json:"ref,omitempty"`
	Outcome string `json:"outcome"`
	Reason  string `json:"reason,omitempty"`
	// pending is the line's change while it waits to be proposed
	// (labels_import.go); its outcome is the line's once it was.
	pending *labelChange
	// label and space are what the line asked for, for the site's
	// preview, which sends the lines that change something back.
	label, space string
}

// forSite is the report as the site shows it.
func (r labelImportReport) forSite() site.LabelImport {
	out := site.LabelImport{Records: r.Records, Imported: r.Imported, Changed: r.Changed, Unchanged: r.Unchanged, Skipped: r.Skipped}
	for _, res := range r.Results {
		out.Lines = append(out.Lines, site.LabelLine{Line: res.Line, Type: res.Type, Ref: res.Ref, Outcome: res.Outcome, Reason: res.Reason,
			Label: res.label, Space: res.space, Changes: res.Outcome == labelImported || res.Outcome == labelChanged})
	}
	return out
}

func (r *labelImportReport) add(res labelImportResult) {
	r.Results = append(r.Results, res)
	r.Records++
	switch res.Outcome {
	case labelImported:
		r.Imported++
	case labelChanged:
		r.Changed++
	case labelUnchanged:
		r.Unchanged++
	default:
		r.Skipped++
	}
}

// labelOperations: the export answers a BIP-329 file and the import
// reads one (JSON Lines), so neither has a JSON body type of its own.
var labelOperations = []operation{
	{id: "exportLabels", method: fasthttp.MethodGet, path: "/labels.jsonl", apis: ownerAPI, status: fasthttp.StatusOK,
		serve: func(s *Server, r *request) error {
			if err := s.bearer(r); err != nil {
				return err
			}
			return s.serveLabels(r)
		}},
	{id: "importLabels", method: fasthttp.MethodPost, path: "/labels.jsonl", apis: ownerAPI,
		response: typeOf[labelImportReport](), status: fasthttp.StatusOK,
		serve: func(s *Server, r *request) error {
			if err := s.bearer(r); err != nil {
				return err
			}
			dryRun, err := labelDryRun(r.ctx.QueryArgs().Peek("dry_run"))
			if err != nil {
				return err
			}
			report, err := s.importLabels(r, r.ctx.PostBody(), dryRun)
			if err != nil {
				return err
			}
			return answer(r.ctx, fasthttp.StatusOK, report)
		}},
}

// labelDryRun reads the import's dry_run parameter: absent or false
// imports, true only reports what an import would do.
func labelDryRun(v []byte) (bool, error) {
	switch string(v) {
	case "", "false":
		return false, nil
	case "true":
		return true, nil
	}
	return false, actors.Errorf(actors.CodeValidation, "dry_run must be true or false")
}

// labelsOf returns every label the account of r's credential holds.
func (s *Server) labelsOf(c context.Context, r *request, rc ReadConsistency) (actors.LabelsView, error) {
	res, err := ask(c, s, r, actors.LabelsQuery{}, rc)
	if err != nil {
		return actors.LabelsView{}, err
	}
	return res, nil
}

// serveLabels writes the account's labels as a BIP-329 file.
func (s *Server) serveLabels(r *request) error {
	ctx := r.ctx
	c, cancel := s.context()
	defer cancel()
	v, err := s.labelsOf(c, r, r.consistency)
	if err != nil {
		return err
	}
	var body []byte
	for _, l := range v.Export() {
		body = appendLabelLine(body, string(l.Type), l.Ref, l.Label, l.SpaceID)
	}
	ctx.Response.Header.SetContentType("application/jsonl; charset=utf-8")
	ctx.Response.Header.Set(fasthttp.HeaderContentDisposition, `attachment; filename="addrwatch-labels.jsonl"`)
	ctx.Response.Header.Set(fasthttp.HeaderCacheControl, "no-store")
	ctx.SetStatusCode(fasthttp.StatusOK)
	ctx.SetBody(body)
	return nil
}

// labelLine is a record with its reference in canonical form, and what
// keeps it from being imported before the account is even asked.
type labelLine struct {
	labelRecord
	canonical string
	reason    string
}

// planLabelLines puts each record's reference in canonical form and
// marks the records that cannot be imported whatever the account holds.
// A file may label one reference twice; the last line wins, as it would
// in a wallet reading the file top to bottom, and the earlier ones are
// reported. Taking the first instead would make a second import of the
// same file rename the card back and forth. A bookmark's line (one with
// a Space) labels another card than an Account card's line with the same
// address, and than the same address in another Space.
func planLabelLines(records []labelRecord, network chain.Network) []labelLine {
	lines := make([]labelLine, len(records))
	last := map[[3]string]int{}
	key := func(l labelLine) [3]string { return [3]string{l.Type, l.canonical, l.Space} }
	for i, r := range records {
		l := labelLine{labelRecord: r}
		switch {
		case r.HasSpace && r.Type != string(actors.LabelAddress):
			l.reason = spaceField + " belongs to addr records only (a bookmark card's address)"
		case r.HasSpace && r.Space == "":
			l.reason = spaceField + " is empty: it names the Space of a bookmark card"
		case r.Type == string(actors.LabelAddress):
			canonical, err := validateLabelAddress(r.Ref, network)
			l.canonical, l.reason = canonical, err
		case r.Type == string(actors.LabelTransaction):
			if txid, valid := canonicalTxID(r.Ref); valid {
				l.canonical = txid
			} else {
				l.reason = "the ref is not a transaction ID (64 hexadecimal characters)"
			}
		default:
			l.reason = "addrwatch keeps addr and tx labels only; a " + quoteShort(r.Type) + " label is not imported"
		}
		if l.reason == "" && (!r.HasLabel || r.Label == "") {
			l.reason = "the record has no label"
		}
		if l.reason == "" {
			last[key(l)] = i
		}
		lines[i] = l
	}
	for i := range lines {
		if lines[i].reason == "" && last[key(lines[i])] != i {
			lines[i].reason = "a later line labels the same " + labelNoun(lines[i].Type) + "; the last one is imported"
		}
	}
	return lines
}

func labelNoun(typ string) string {
	if typ == string(actors.LabelTransaction) {
		return "transaction"
	}
	return "address"
}

// labelRefusal says why a rule or the upstream refused a line.
func labelRefusal(failure error, what string) string {
	err := specError(failure)
	switch err.Code {
	case actors.CodeOverviewFull:
		return "the plan is full: " + err.Message
	case actors.CodeBookmarkFull:
		return "the Space is full: " + err.Message
	case actors.CodeNotFound:
		return "transaction not found: the block explorer does not know it"
	case actors.CodeHTTPError:
		return "the block explorer could not be reached to verify the transaction; import the file again later"
	case actors.CodeStaleVersion:
		return what + " changed during the import; import the file again"
	case actors.CodeValidation:
		return "the label cannot be used for " + what + ": " + err.Message
	}
	return err.Message
}

// echoRef is as much of a ref as the report repeats.
func echoRef(ref string) string { return truncateText(ref, labelRefEchoMax) }

// quoteShortRaw is a record's type as the report repeats it: short, since
// any string is a type a line may claim.
func quoteShortRaw(typ string) string { return truncateText(typ, 20) }

// quoteShort is quoteShortRaw in quotes, for a sentence.
func quoteShort(typ string) string { return `"` + quoteShortRaw(typ) + `"` }

// truncateText cuts s to at most n bytes on a character boundary, marking
// the cut.
func truncateText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// validateLabelAddress puts an addr record's ref in canonical form, with
// the validator the card rules use on the node's network, or says why it
// is not an address an Account card may hold.
func validateLabelAddress(ref string, network chain.Network) (string, string) {
	canonical, err := chain.ValidateBitcoinAddressOn(ref, network)
	if err != nil {
		return "", "not a Bitcoin address an Account card can hold (" + err.Error() + ")"
	}
	return canonical, ""
}

// canonicalTxID puts a tx record's ref in canonical form.
func canonicalTxID(ref string) (string, bool) { return chain.CanonicalTxID(ref) }
