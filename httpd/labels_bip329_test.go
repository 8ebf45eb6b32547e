package httpd

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	jsonv2 "github.com/go-json-experiment/json"
)

// A label file of every record type the format has, in the shapes wallets
// write them (written for these tests; the refs are real mainnet values).
const walletLabelFile = `{"type":"tx","ref":"f4184fc596403b9d638783cf57adfe4c75c605f6356fbc91338530e9831e9e16","label":"First payment between people","origin":"wpkh([d34db33f/84'/0'/0'])"}
{"type":"addr","ref":"bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4","label":"Savings"}
{"type":"pubkey","ref":"0279be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798","label":"Generator"}
{"type":"input","ref":"f4184fc596403b9d638783cf57adfe4c75c605f6356fbc91338530e9831e9e16:0","label":"Spent coins"}
{"type":"output","ref":"f4184fc596403b9d638783cf57adfe4c75c605f6356fbc91338530e9831e9e16:1","label":"Change","spendable":false}
{"type":"xpub","ref":"xpub661MyMwAqRbcFtXgS5sYJABqqG9YLmC4Q1Rdap9gSE8NqtwybGhePY2gZ29ESFjqJoCu1Rupje8YtGqsefD265TMg7usUDFdp6W1EGMcet8","label":"Test vector key"}
{"type":"addr","ref":"3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy","height":800000,"time":"2023-07-24T00:00:00Z"}
`

func TestParseLabelFileReadsEveryRecordType(t *testing.T) {
	t.Parallel()
	records, bad, err := parseLabelFile([]byte(walletLabelFile))
	if err != nil || len(bad) != 0 {
		t.Fatalf("parseLabelFile: %v, bad lines %v", err, bad)
	}
	types := []string{}
	for _, r := range records {
		types = append(types, r.Type)
	}
	if want := []string{"tx", "addr", "pubkey", "input", "output", "xpub", "addr"}; !reflect.DeepEqual(types, want) {
		t.Fatalf("types %v, want %v", types, want)
	}
	first := records[0]
	if first.Line != 1 || first.Label != "First payment between people" || !first.HasLabel || first.Origin != "wpkh([d34db33f/84'/0'/0'])" {
		t.Fatalf("first record = %+v", first)
	}
	if last := records[6]; last.Line != 7 || last.HasLabel || last.Label != "" {
		t.Fatalf("a record without a label (and with fields the format's readers ignore) = %+v", last)
	}
}

func TestParseLabelFileReportsLinesThatAreNotRecords(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", labelLineBytesMax)
	file := strings.Join([]string{
		`{"type":"addr","ref":"bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4","label":"ok"}`, // 1
		``,                                      // 2: blank, not reported
		`   `,                                   // 3: blank
		`not json`,                              // 4
		`["type","addr"]`,                       // 5
		`{"type":"addr"`,                        // 6
		`{"ref":"x"}`,                           // 7
		`{"type":"tx"}`,                         // 8
		`{"type":5,"ref":"x"}`,                  // 9
		`{"type":"tx","ref":"x","label":["a"]}`, // 10
		`{"type":"tx","ref":"x","ref":"y"}`,     // 11
		"{\"type\":\"tx\",\"ref\":\"\xff\"}",    // 12
		`{"type":"tx","ref":"x"} {"type":"tx","ref":"y"}`, // 13
		`{"type":"tx","ref":"` + long + `"}`,              // 14
		`{"type":"tx","ref":"x","label":null}`,            // 15: null is no label
		"\r",                                              // 16: blank
		`{"type":"addr","ref":"bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4","label":"last"}`, // 17, no newline at the end
	}, "\n")
	records, bad, err := parseLabelFile([]byte(file))
	if err != nil {
		t.Fatal(err)
	}
	if len(records) != 3 || records[0].Line != 1 || records[1].Line != 15 || records[2].Line != 17 || records[2].Label != "last" {
		t.Fatalf("records %+v, want lines 1, 15 and 17", records)
	}
	if records[1].HasLabel {
		t.Fatal(`"label": null read as a label`)
	}
	want := map[int]string{
		4:  "not a JSON object",
		5:  "not a JSON object",
		6:  "not valid JSON",
		7:  `no "type"`,
		8:  `no "ref"`,
		9:  `field "type" must be a string`,
		10: `field "label" must be a string`,
		11: `field "ref" appears more than once`,
		12: "not valid UTF-8",
		13: "not valid JSON",
		14: "longer than",
	}
	if len(bad) != len(want) {
		t.Fatalf("bad lines %+v, want %d", bad, len(want))
	}
	for _, b := range bad {
		if !strings.Contains(b.Reason, want[b.Line]) {
			t.Errorf("line %d: reason %q, want it to say %q", b.Line, b.Reason, want[b.Line])
		}
		if strings.Contains(b.Reason, "xxxx") || strings.Contains(b.Reason, "addr") {
			t.Errorf("line %d: reason %q repeats the line's values", b.Line, b.Reason)
		}
	}
}

func TestParseLabelFileTakesAByteOrderMarkAndCRLF(t *testing.T) {
	t.Parallel()
	file := "\xef\xbb\xbf" + `{"type":"tx","ref":"a","label":"one"}` + "\r\n" + `{"type":"tx","ref":"b","label":"two"}` + "\r\n"
	records, bad, err := parseLabelFile([]byte(file))
	if err != nil || len(bad) != 0 || len(records) != 2 || records[1].Label != "two" {
		t.Fatalf("records %+v, bad %+v, err %v", records, bad, err)
	}
}

func TestParseLabelFileRefusesTooManyRecords(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	for i := range labelFileLinesMax + 1 {
		fmt.Fprintf(&b, `{"type":"tx","ref":"%d"}`+"\n\n", i) // blank lines do not count
	}
	if _, _, err := parseLabelFile(b.Bytes()); err == nil || !strings.Contains(err.Error(), "at most 10000 records") {
		t.Fatalf("a file of %d records: err = %v", labelFileLinesMax+1, err)
	}
	b.Reset()
	for i := range labelFileLinesMax {
		fmt.Fprintf(&b, `{"type":"tx","ref":"%d"}`+"\n\n", i)
	}
	if records, _, err := parseLabelFile(b.Bytes()); err != nil || len(records) != labelFileLinesMax {
		t.Fatalf("a file of exactly %d records: %d read, err %v", labelFileLinesMax, len(records), err)
	}
}

// TestExportedLinesReadBack checks that what the export writes is read
// back as the same record, for labels with quotes, controls, HTML and
// characters outside the BMP.
func TestExportedLinesReadBack(t *testing.T) {
	t.Parallel()
	labels := []string{`plain`, `"quoted" \ back`, "tab\tnew\nline", `<script>alert(1)</script> & more`, "emoji 🪙 and ü", "\u2028 line separator"}
	var file []byte
	for i, l := range labels {
		file = appendLabelLine(file, "tx", fmt.Sprintf("ref-%d", i), l, "")
	}
	if bytes.Count(file, []byte("\n")) != len(labels) {
		t.Fatalf("the export put a newline inside a record:\n%s", file)
	}
	records, bad, err := parseLabelFile(file)
	if err != nil || len(bad) != 0 || len(records) != len(labels) {
		t.Fatalf("read back %d records, bad %v, err %v", len(records), bad, err)
	}
	for i, r := range records {
		if r.Type != "tx" || r.Ref != fmt.Sprintf("ref-%d", i) || r.Label != labels[i] {
			t.Errorf("record %d read back as %+v, want label %q", i, r, labels[i])
		}
	}
}

// FuzzParseLabelFile holds the reader to its promises on any input: no
// panic, every line either a record or a reason, line numbers in order
// and within the file, and a record's fields exactly what the line's JSON
// says.
func FuzzParseLabelFile(f *testing.F) {
	f.Add([]byte(walletLabelFile))
	f.Add([]byte("{\"type\":\"tx\",\"ref\":\"a\",\"label\":\"b\"}\r\n\n{\"type\":1}\n"))
	f.Add([]byte(`{"type":"addr","ref":"x","label":"` + strings.Repeat("é", 100) + `"}`))
	f.Add([]byte("\xef\xbb\xbf\n\n{}"))
	f.Fuzz(func(t *testing.T, file []byte) {
		records, bad, err := parseLabelFile(file)
		if err != nil {
			if bytes.Count(file, []byte("\n")) < labelFileLinesMax {
				t.Fatalf("refused a file of fewer than %d lines: %v", labelFileLinesMax, err)
			}
			return
		}
		lines := bytes.Count(file, []byte("\n")) + 1
		prev := 0
		seen := map[int]bool{}
		for _, r := range records {
			if r.Line <= 0 || r.Line > lines || seen[r.Line] {
				t.Fatalf("record line %d out of range or repeated (file of %d lines)", r.Line, lines)
			}
			seen[r.Line] = true
			if r.Line <= prev {
				t.Fatalf("records out of order: %d after %d", r.Line, prev)
			}
			prev = r.Line
			if !utf8.ValidString(r.Type) || !utf8.ValidString(r.Ref) || !utf8.ValidString(r.Label) {
				t.Fatalf("record %d holds invalid UTF-8", r.Line)
			}
			var w wireLabel
			if err := jsonv2.Unmarshal(bytes.TrimSpace(bytes.TrimSuffix(lineOf(file, r.Line), []byte("\r"))), &w); err != nil || *w.Type != r.Type || *w.Ref != r.Ref {
				t.Fatalf("record %d = %+v does not match its line (err %v)", r.Line, r, err)
			}
		}
		for _, b := range bad {
			if b.Reason == "" || seen[b.Line] || b.Line <= 0 || b.Line > lines {
				t.Fatalf("bad line %+v: no reason, out of range, or also a record", b)
			}
			seen[b.Line] = true
		}
	})
}

// lineOf returns line n (1-based) of file, without its newline.
func lineOf(file []byte, n int) []byte {
	file = bytes.TrimPrefix(file, []byte("\xef\xbb\xbf"))
	return bytes.Split(file, []byte("\n"))[n-1]
}
