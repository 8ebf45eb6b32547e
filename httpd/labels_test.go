package httpd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/actors"
)

// Tests of the owner's BIP-329 export and import over the owner API, on a
// server whose upstream is csvHistory (history_csv_test.go).

// labelsTest is a csvTest with helpers for label files.
type labelsTest struct{ *csvTest }

func newLabelsTest(t testing.TB, plan actors.Plan) *labelsTest {
	t.Helper()
	// csvAddrA has transactions in the latest year, so a base-plan
	// account may start notes on them.
	return &labelsTest{newCSVTest(t, plan, csvAddr{address: csvAddrA, confirmed: 3, age: time.Hour, step: time.Hour})}
}

// txOf is the txid of csvAddrA's transaction at position p.
func (l *labelsTest) txOf(p int) string { return l.hist.tx(0, p).TxID }

// post imports file as the owner (or with bearer when set) and returns the
// status and the raw body.
func (l *labelsTest) post(file string, bearer ...string) (int, []byte) {
	l.t.Helper()
	var req fasthttp.Request
	req.Header.SetMethod("POST")
	req.SetRequestURI(labelsPath)
	token := l.owner
	if len(bearer) > 0 {
		token = bearer[0]
	}
	req.Header.Set(fasthttp.HeaderAuthorization, "Bearer "+token)
	req.Header.SetContentType("application/jsonl")
	req.SetBodyString(file)
	ctx := &fasthttp.RequestCtx{}
	ctx.Init(&req, &net.TCPAddr{IP: net.ParseIP("198.51.100.2"), Port: 40000}, nil)
	l.handler(ctx)
	return ctx.Response.StatusCode(), append([]byte(nil), ctx.Response.Body()...)
}

// importFile imports file and returns the report, failing on anything but
// a 200.
func (l *labelsTest) importFile(file string) labelImportReport {
	l.t.Helper()
	status, body := l.post(file)
	if status != 200 {
		l.t.Fatalf("import: %d %s", status, body)
	}
	var r labelImportReport
	if err := json.Unmarshal(body, &r); err != nil {
		l.t.Fatalf("report %s: %v", body, err)
	}
	if r.Records != len(r.Results) || r.Imported+r.Changed+r.Unchanged+r.Skipped != r.Records {
		l.t.Fatalf("report counts do not add up: %+v", r)
	}
	return r
}

// export returns the account's label file.
func (l *labelsTest) export() string {
	l.t.Helper()
	ctx := l.request("GET", labelsPath, nil)
	if ctx.Response.StatusCode() != 200 {
		l.t.Fatalf("export: %d %s", ctx.Response.StatusCode(), ctx.Response.Body())
	}
	if ct := string(ctx.Response.Header.ContentType()); ct != "application/jsonl; charset=utf-8" {
		l.t.Fatalf("export Content-Type %q", ct)
	}
	if cd := string(ctx.Response.Header.Peek(fasthttp.HeaderContentDisposition)); !strings.HasPrefix(cd, "attachment;") {
		l.t.Fatalf("export Content-Disposition %q", cd)
	}
	return string(ctx.Response.Body())
}

// outcomes lists each result as "line:outcome".
func outcomes(r labelImportReport) []string {
	var out []string
	for _, res := range r.Results {
		out = append(out, fmt.Sprintf("%d:%s", res.Line, res.Outcome))
	}
	return out
}

func labelFileLine(typ, ref, label string) string {
	return string(appendLabelLine(nil, typ, ref, label, ""))
}

func TestLabelImportReportsEveryLine(t *testing.T) {
	t.Parallel()
	l := newLabelsTest(t, actors.PlanBase)
	long := strings.Repeat("n", 51)
	file := labelFileLine("addr", csvAddrA, "Savings") + // 1: a new Account card
		labelFileLine("tx", l.txOf(0), "Rent") + // 2: a new note (its card came in on line 1)
		labelFileLine("tx", strings.ToUpper(l.txOf(1)), long) + // 3: over the note limit
		labelFileLine("tx", strings.Repeat("f", 64), "Unknown") + // 4: no such transaction
		labelFileLine("addr", "LT2KVaAy1ppRuxRgrS5RNU3vBsy7RibPeA", "Litecoin") + // 5: not a Bitcoin address
		labelFileLine("pubkey", "0279be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798", "key") + // 6: a type not kept
		"\n" + // 7: blank
		"{broken\n" + // 8
		`{"type":"addr","ref":"` + csvAddrB + `"}` + "\n" + // 9: no label
		labelFileLine("addr", csvAddrC, "First name") + // 10: superseded by line 11
		labelFileLine("addr", csvAddrC, "Second name") + // 11
		labelFileLine("tx", "nothex", "x") // 12
	r := l.importFile(file)
	want := []string{"1:imported", "2:imported", "3:skipped", "4:skipped", "5:skipped", "6:skipped", "8:skipped", "9:skipped", "10:skipped", "11:imported", "12:skipped"}
	if got := outcomes(r); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("outcomes %v, want %v\n%+v", got, want, r.Results)
	}
	reasons := map[int]string{3: "50 code points", 4: "transaction not found", 5: "not a Bitcoin address", 6: `"pubkey" label is not imported`,
		8: "not valid JSON", 9: "no label", 10: "a later line labels the same address", 12: "not a transaction ID"}
	for _, res := range r.Results {
		if want, ok := reasons[res.Line]; ok && !strings.Contains(res.Reason, want) {
			t.Errorf("line %d: reason %q, want it to say %q", res.Line, res.Reason, want)
		}
		if res.Outcome != labelSkipped && res.Reason != "" {
			t.Errorf("line %d %s with a reason %q", res.Line, res.Outcome, res.Reason)
		}
	}
	if r.Results[2].Ref != l.txOf(1) {
		t.Fatalf("a tx ref is reported in canonical form: %q", r.Results[2].Ref)
	}
	if r.Records != 11 || r.Imported != 3 || r.Skipped != 8 {
		t.Fatalf("counts %+v", r)
	}

	// What the account now holds, exported: both cards and the note.
	want2 := labelFileLine("addr", csvAddrA, "Savings") + labelFileLine("addr", csvAddrC, "Second name") + labelFileLine("tx", l.txOf(0), "Rent")
	if got := l.export(); got != want2 {
		t.Fatalf("export after the import:\n%s\nwant\n%s", got, want2)
	}
}

func TestLabelImportTwiceChangesNothing(t *testing.T) {
	t.Parallel()
	l := newLabelsTest(t, actors.PlanBase)
	file := labelFileLine("addr", csvAddrA, "Savings") + labelFileLine("tx", l.txOf(0), "Rent") + labelFileLine("tx", l.txOf(2), "Groceries") + labelFileLine("addr", csvAddrB, "Spending")
	first := l.importFile(file)
	if first.Imported != 4 {
		t.Fatalf("first import %+v", first)
	}
	exported := l.export()
	again := l.importFile(file)
	if again.Unchanged != 4 || again.Imported+again.Changed+again.Skipped != 0 {
		t.Fatalf("the same file again: %+v, want every line unchanged", again)
	}
	if l.export() != exported {
		t.Fatal("a second import of the same file changed the labels")
	}
	// The export imports as nothing new either.
	if r := l.importFile(exported); r.Unchanged != 4 || r.Records != 4 {
		t.Fatalf("importing the export: %+v", r)
	}
	// A wallet that renamed an address and a note: changed, once.
	edited := labelFileLine("addr", csvAddrA, "Cold storage") + labelFileLine("tx", l.txOf(0), "Rent, March")
	if r := l.importFile(edited); r.Changed != 2 {
		t.Fatalf("edited labels: %+v, want 2 changed", r)
	}
	if r := l.importFile(edited); r.Unchanged != 2 {
		t.Fatalf("edited labels again: %+v, want 2 unchanged", r)
	}
}

func TestLabelImportStopsAtThePlansCardLimit(t *testing.T) {
	t.Parallel()
	l := newLabelsTest(t, actors.PlanBase)
	var file strings.Builder
	fixtures := []string{
		"1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa", "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4", "3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy",
		"bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqzk5jj0", "1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2", "3Ai1JZ8pdJb2ksieUV8FsxSNVJCpoPi8W6",
		"bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq", "1Q1pE5vPGEEMqRcVRMbtBK842Y6Pzo6nK9", "1MirQ9bwyQcGVJPwKUgapu5ouK2E2Ey4gX",
		"12MzCDwodF9G1e7jfwLXfR164RNtx4BRVG", "3QJmV3qfvL9SuYo34YihAf3sRCW3qSinyC",
	}
	for i, a := range fixtures {
		file.WriteString(labelFileLine("addr", a, fmt.Sprintf("Address %d", i+1)))
	}
	r := l.importFile(file.String())
	if r.Imported != 10 || r.Skipped != 1 || !strings.Contains(r.Results[10].Reason, "plan is full") {
		t.Fatalf("11 addresses on a base plan: %+v, last %+v", r, r.Results[10])
	}
}

func TestLabelImportReportsAnUpstreamOutagePerLine(t *testing.T) {
	t.Parallel()
	// A transaction older than a base plan's year: only the card's
	// History page can show it may take a note, and that page fails.
	l := &labelsTest{newCSVTest(t, actors.PlanBase, csvAddr{address: csvAddrA, confirmed: 3, age: 400 * 24 * time.Hour, step: time.Hour})}
	l.importFile(labelFileLine("addr", csvAddrA, "Savings"))
	l.hist.fail(csvAddrA, 0)
	r := l.importFile(labelFileLine("tx", l.txOf(0), "Old one") + labelFileLine("addr", csvAddrB, "Still imported"))
	if got := outcomes(r); strings.Join(got, " ") != "1:skipped 2:imported" {
		t.Fatalf("outcomes %v", got)
	}
	if !strings.Contains(r.Results[0].Reason, "could not be reached") || !strings.Contains(r.Results[0].Reason, "again later") {
		t.Fatalf("reason %q", r.Results[0].Reason)
	}
	if strings.Contains(l.export(), "Old one") {
		t.Fatal("a line the upstream could not verify was imported")
	}
}

func TestLabelImportRefusesWhatIsNotAnOwnersFile(t *testing.T) {
	t.Parallel()
	l := newLabelsTest(t, actors.PlanBase)
	var tooMany bytes.Buffer
	for i := range labelFileLinesMax + 1 {
		fmt.Fprintf(&tooMany, `{"type":"tx","ref":"%d"}`+"\n", i)
	}
	status, body := l.post(tooMany.String())
	if status != 422 || !bytes.Contains(body, []byte(`"code":"VALIDATION"`)) {
		t.Fatalf("a file of too many records: %d %s", status, body)
	}
	if status, _ := l.post(labelFileLine("addr", csvAddrA, "x"), "awk.not-a-key"); status != 401 {
		t.Fatalf("an API key on the owner's import: %d, want 401", status)
	}
	if got := l.export(); got != "" {
		t.Fatalf("a refused import changed the labels: %q", got)
	}
	// An empty file is a report of nothing.
	if r := l.importFile(""); r.Records != 0 || len(r.Results) != 0 {
		t.Fatalf("empty file: %+v", r)
	}
}

// FuzzLabelImport imports arbitrary files into one account and checks
// that the answer is a report (never a 500), that it accounts for every
// line that is not blank once, and that the account never gains more
// labels than the report says it imported.
func FuzzLabelImport(f *testing.F) {
	f.Add([]byte(walletLabelFile))
	f.Add([]byte(labelFileLine("addr", csvAddrA, "Savings") + labelFileLine("addr", csvAddrA, "Twice") + "{\n"))
	f.Add([]byte(labelFileLine("tx", strings.Repeat("ab", 32), strings.Repeat("é", 60))))
	f.Add([]byte(`{"type":"addr","ref":"` + csvAddrB + `","label":"\u0000<b>"}`))
	l := newLabelsTest(f, actors.PlanBase)
	f.Fuzz(func(t *testing.T, file []byte) {
		l.t = t
		before := strings.Count(l.export(), "\n")
		status, body := l.post(string(file))
		if status != 200 {
			if status != 422 {
				t.Fatalf("import answered %d %s", status, body)
			}
			return
		}
		var r labelImportReport
		if err := json.Unmarshal(body, &r); err != nil {
			t.Fatalf("report %s: %v", body, err)
		}
		records, bad, _ := parseLabelFile(file)
		if r.Records != len(records)+len(bad) || len(r.Results) != r.Records || r.Imported+r.Changed+r.Unchanged+r.Skipped != r.Records {
			t.Fatalf("report %+v for %d records and %d bad lines", r, len(records), len(bad))
		}
		seen := map[int]bool{}
		for _, res := range r.Results {
			if seen[res.Line] {
				t.Fatalf("line %d reported twice", res.Line)
			}
			seen[res.Line] = true
		}
		if after := strings.Count(l.export(), "\n"); after > before+r.Imported {
			t.Fatalf("labels grew from %d to %d with %d imported", before, after, r.Imported)
		}
	})
}

// importDry imports file with ?dry_run=true and returns the report.
func (l *labelsTest) importDry(file string) labelImportReport {
	l.t.Helper()
	var req fasthttp.Request
	req.Header.SetMethod("POST")
	req.SetRequestURI(labelsPath + "?dry_run=true")
	req.Header.Set(fasthttp.HeaderAuthorization, "Bearer "+l.owner)
	req.SetBodyString(file)
	ctx := &fasthttp.RequestCtx{}
	ctx.Init(&req, &net.TCPAddr{IP: net.ParseIP("198.51.100.2"), Port: 40000}, nil)
	l.handler(ctx)
	var r labelImportReport
	if ctx.Response.StatusCode() != 200 || json.Unmarshal(ctx.Response.Body(), &r) != nil || !r.DryRun {
		l.t.Fatalf("dry run: %d %s", ctx.Response.StatusCode(), ctx.Response.Body())
	}
	return r
}
