package httpd

import (
	"bytes"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/addrwatch/addrwatch/httpd/views"
	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// BIP-329 label files: JSON Lines, one label record per line, as wallets
// (Sparrow, Electrum and others) export and import them. A record is a
// JSON object with a "type" (tx, addr, pubkey, input, output, xpub), a
// "ref" (what is labelled: a transaction ID, an address, ...) and
// optionally a "label" and an "origin" (the key origin in a wallet's
// descriptor). Wallets add other fields (spendable, height, fee, ...);
// a reader ignores those. This file reads and writes the format and
// nothing else: which records addrwatch keeps is labels_import.go's.
//
// addrwatch adds one field of its own, "addrwatch_space", to the addr
// record of a bookmark card: the ID of its Space, so that importing the
// export puts the label back on that card rather than on an Account card.
// BIP-329 defines optional fields beyond type, ref and label (origin,
// spendable and its "Additional Fields") and lets an importer ignore what
// it does not store, so a wallet reads such a record as the plain address
// label it also is.

const (
	// labelFileBytesMax bounds a label file (views.LabelFileBytesMax).
	labelFileBytesMax = views.LabelFileBytesMax
	// labelFileLinesMax bounds the records one import works through.
	labelFileLinesMax = 10_000
	// labelLineBytesMax bounds one line. A wallet's label is a few dozen
	// characters; a line this long is not a label a person wrote.
	labelLineBytesMax = 64 << 10
)

// labelRecord is one line of a label file that reads as a record.
type labelRecord struct {
	Line     int // 1-based, counting every line of the file
	Type     string
	Ref      string
	Label    string
	HasLabel bool
	Origin   string
	// Space is the record's addrwatch_space (spaceField), and HasSpace
	// whether it had one.
	Space    string
	HasSpace bool
}

// spaceField is the record field that names a bookmark label's Space.
const spaceField = "addrwatch_space"

// labelLineError is a line that does not read as a record, and why.
type labelLineError struct {
	Line   int
	Reason string
}

// wireLabel is a record as JSON. Pointers tell a missing field from an
// empty one; fields not named here are ignored, as the format asks.
type wireLabel struct {
	Type   *string `json:"type"`
	Ref    *string `json:"ref"`
	Label  *string `json:"label"`
	Origin *string `json:"origin"`
	Space  *string `json:"addrwatch_space"`
}

// parseLabelFile reads a label file into records and the lines that are
// not records, in file order. Blank lines are neither. It fails only when
// the file has more than labelFileLinesMax lines that are not blank.
func parseLabelFile(file []byte) ([]labelRecord, []labelLineError, error) {
	var records []labelRecord
	var bad []labelLineError
	file = bytes.TrimPrefix(file, []byte("\xef\xbb\xbf")) // a byte-order mark some editors write
	for n, counted := 1, 0; len(file) > 0; n++ {
		line := file
		if i := bytes.IndexByte(file, '\n'); i >= 0 {
			line, file = file[:i], file[i+1:]
		} else {
			file = nil
		}
		line = bytes.TrimSuffix(line, []byte("\r"))
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if counted++; counted > labelFileLinesMax {
			return nil, nil, fmt.Errorf("a label file may hold at most %d records; split it and import each part", labelFileLinesMax)
		}
		r, reason := parseLabelLine(line)
		if reason != "" {
			bad = append(bad, labelLineError{Line: n, Reason: reason})
			continue
		}
		r.Line = n
		records = append(records, r)
	}
	return records, bad, nil
}

// parseLabelLine reads one line as a record, or says why it is not one.
func parseLabelLine(line []byte) (labelRecord, string) {
	if len(line) > labelLineBytesMax {
		return labelRecord{}, fmt.Sprintf("the line is longer than %d bytes", labelLineBytesMax)
	}
	if !utf8.Valid(line) {
		return labelRecord{}, "the line is not valid UTF-8"
	}
	trimmed := bytes.TrimSpace(line)
	if trimmed[0] != '{' {
		return labelRecord{}, "the line is not a JSON object"
	}
	var w wireLabel
	if err := jsonv2.Unmarshal(trimmed, &w); err != nil {
		return labelRecord{}, labelJSONProblem(err)
	}
	switch {
	case w.Type == nil:
		return labelRecord{}, `the record has no "type"`
	case w.Ref == nil:
		return labelRecord{}, `the record has no "ref"`
	}
	r := labelRecord{Type: *w.Type, Ref: *w.Ref}
	if w.Label != nil {
		r.Label, r.HasLabel = *w.Label, true
	}
	if w.Origin != nil {
		r.Origin = *w.Origin
	}
	if w.Space != nil {
		r.Space, r.HasSpace = *w.Space, true
	}
	return r, ""
}

// labelJSONProblem says what is wrong with a line's JSON without echoing
// any of its values.
func labelJSONProblem(err error) string {
	var semantic *jsonv2.SemanticError
	var syntactic *jsontext.SyntacticError
	switch {
	case errors.As(err, &semantic) && semantic.JSONPointer != "":
		return fmt.Sprintf("field %s must be a string", fieldName(semantic.JSONPointer))
	case errors.As(err, &syntactic) && errors.Is(syntactic.Err, jsontext.ErrDuplicateName):
		return "field " + fieldName(syntactic.JSONPointer) + " appears more than once"
	case errors.As(err, &syntactic):
		return fmt.Sprintf("the line is not valid JSON (at byte %d)", syntactic.ByteOffset)
	}
	return "the line is not valid JSON"
}

// appendLabelLine appends the JSON line of a record addrwatch exports:
// type, ref and label, in that order, as wallets write them, then a
// bookmark's Space when space is not "".
func appendLabelLine(dst []byte, typ, ref, label, space string) []byte {
	dst = append(dst, `{"type":`...)
	dst, _ = jsontext.AppendQuote(dst, typ)
	dst = append(dst, `,"ref":`...)
	dst, _ = jsontext.AppendQuote(dst, ref)
	dst = append(dst, `,"label":`...)
	dst, _ = jsontext.AppendQuote(dst, label)
	if space != "" {
		dst = append(dst, `,"`+spaceField+`":`...)
		dst, _ = jsontext.AppendQuote(dst, space)
	}
	return append(dst, "}\n"...)
}
