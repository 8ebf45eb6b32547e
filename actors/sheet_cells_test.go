package actors

import (
	"strings"
	"testing"
)

// Issue 13: Sheet cells took terminal escapes and bidi overrides that
// names, notes and headings refuse. A cell is plain text (spec: Sheet),
// the card note's rule: printable characters, newline and tab.

var (
	notPlainText = map[string]string{
		"terminal escape":  "\u001b[2J",
		"bidi override":    "\u202Eevil",
		"bidi isolate":     "a\u2066b",
		"NUL":              "a\x00b",
		"carriage return":  "a\rb",
		"vertical tab":     "a\vb",
		"DEL":              "a\x7fb",
		"C1 control (NEL)": "a\u0085b",
		"zero-width space": "a\u200bb",
		"line separator":   "a\u2028b",
		"byte order mark":  "\ufeffa",
		"private use":      "a\ue000b",
	}
	plainText = []string{"", "line 1\nline 2", "a\tb", "é ü 漢字 🙂", "=SUM(A1:A9)", "<b>x</b> & 'q'", " spaced ", strings.Repeat("é", sheetCellCharsMax)}
)

func TestSheetCellsArePlainText(t *testing.T) {
	f := newSheetFixture(t)
	for what, bad := range notPlainText {
		for col := range sheetColumnCount {
			cells := [sheetColumnCount]string{"addr", "btc", "", "", ""}
			cells[col] = bad
			e := f.mustFail(CodeValidation, f.w, f.patch(rowIn(7, cells)))
			mustNotMention(t, "PATCH refusal of a "+what, e.Message, bad)
			e = f.mustFail(CodeValidation, f.w, f.put(cells[:]...))
			mustNotMention(t, "PUT refusal of a "+what, e.Message, bad)
			// The owner is held to the same rule.
			f.mustFail(CodeValidation, f.owner, f.patch(rowIn(7, cells)))
		}
	}
	for i, text := range plainText {
		cells := [sheetColumnCount]string{"addr", "btc", text, "", text}
		f.mustOK(f.w, f.patch(rowIn(i, cells)))
		if got := f.sheet().row(i).Cells; got != cells {
			t.Fatalf("row %d holds %q, sent %q", i, got, cells)
		}
		put := f.mustOK(f.owner, f.put("put", "btc", text, "", ""))
		if v := bodyAs[SheetPutView](t, put); v.Cells[2] != text {
			t.Fatalf("PUT saved %q, sent %q", v.Cells[2], text)
		}
	}
}

// One rule in one place: a cell takes exactly what a card note takes.
func TestSheetCellsFollowTheNoteRule(t *testing.T) {
	f := newSheetFixture(t)
	samples := append([]string{}, plainText...)
	for _, bad := range notPlainText {
		samples = append(samples, bad)
	}
	for _, text := range samples {
		short := text
		if charCount(short) > cardNoteCharsMax {
			short = string([]rune(short)[:cardNoteCharsMax])
		}
		noteOK := CardFields{Note: &short}.validate() == nil
		_, err := f.sw().sheetCells([]string{short, "", "", "", ""})
		if cellOK := err == nil; cellOK != noteOK {
			t.Fatalf("%q: a cell takes it %v, a note %v", short, cellOK, noteOK)
		}
	}
}

// Log entries written before issue 13 carry no PlainTextCells: they are
// applied as they were then, when a cell took any valid UTF-8, so that a
// log replayed after the upgrade reaches the state it reached.
func TestSheetCellsOfOldEntriesTakeAnyText(t *testing.T) {
	f := newSheetFixture(t)
	old := f.patch(rowIn(0, [sheetColumnCount]string{"addr", "btc", "", "", "\u001b[2J"}))
	old.PlainTextCells = false
	f.mustOK(f.w, old)
	put := f.put("addr2", "btc", "\u202Eevil", "", "")
	put.PlainTextCells = false
	f.mustOK(f.w, put)
	if f.sheet().row(0).Cells[4] != "\u001b[2J" || f.sheet().row(1).Cells[2] != "\u202Eevil" {
		t.Fatalf("old entries' cells were not stored as then: %q %q", f.sheet().row(0).Cells, f.sheet().row(1).Cells)
	}
	// Invalid UTF-8 and overlong cells were refused then as now.
	bad := f.put("addr3", "btc", "\xff", "", "")
	bad.PlainTextCells = false
	f.mustFail(CodeValidation, f.w, bad)
}
