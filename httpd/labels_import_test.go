package httpd

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg"

	"github.com/addrwatch/addrwatch/actors"
	"github.com/addrwatch/addrwatch/cluster/clustererr"
)

// Tests of what a label import costs the log (labels_import.go): the
// commands it proposes, counted by the memoryStore, each at least part of
// one raft log entry and, proposed alone as an import's are, one entry.

// countedLabelsTest is a labelsTest whose store counts the commands.
func countedLabelsTest(t *testing.T, plan actors.Plan, addrs ...csvAddr) (*labelsTest, *memoryStore) {
	t.Helper()
	o, hist := newHistoryOwnerTest(t, plan, addrs...)
	o.t = t
	store := o.server.store.(*memoryStore)
	return &labelsTest{&csvTest{t: t, hist: hist, handler: o.handler, owner: o.account.OwnerSecret, account: o.account.AccountID}}, store
}

// someAddress is the n-th of as many distinct mainnet addresses as a test
// needs.
func someAddress(t testing.TB, n int) string {
	h := sha256.Sum256(fmt.Append(nil, n))
	a, err := btcutil.NewAddressPubKeyHash(h[:20], &chaincfg.MainNetParams)
	if err != nil {
		t.Fatal(err)
	}
	return a.EncodeAddress()
}

// Issue 28: a file of 3,000 addresses that a full plan refuses grew the
// raft log by 3,001 entries. The plan's room is known before anything is
// proposed: the lines are skipped with the rule's own reason, and the
// import proposes nothing.
func TestLabelImportThePlanRefusesProposesNothing(t *testing.T) {
	t.Parallel()
	l, store := countedLabelsTest(t, actors.PlanBase)
	for i := range 10 {
		l.mustJSON("POST", "/owner/v1/portfolio/cards", map[string]string{"address": someAddress(t, i)}, http.StatusCreated)
	}
	var file strings.Builder
	for i := range 3000 {
		file.WriteString(labelFileLine("addr", someAddress(t, 100+i), fmt.Sprint("wallet ", i)))
	}
	before := store.proposed.Load()
	r := l.importFile(file.String())
	proposed := store.proposed.Load() - before
	if r.Skipped != 3000 || !strings.HasPrefix(r.Results[2999].Reason, "the plan is full: the account holds its limit of 10 Account cards") {
		t.Fatalf("report: %d skipped, the last because %q", r.Skipped, r.Results[2999].Reason)
	}
	if proposed != 0 {
		t.Fatalf("an import the plan refuses whole proposed %d commands", proposed)
	}
	// A file whose every label the account holds proposes nothing either.
	before = store.proposed.Load()
	if r := l.importFile(labelFileLine("addr", someAddress(t, 0), "first")); r.Changed != 1 {
		t.Fatalf("rename: %+v", r)
	}
	if r := l.importFile(labelFileLine("addr", someAddress(t, 0), "first")); r.Unchanged != 1 {
		t.Fatalf("again: %+v", r)
	}
	if n := store.proposed.Load() - before; n != 1 {
		t.Fatalf("a rename and an unchanged line proposed %d commands, want 1", n)
	}
}

// A 3,001-line import (a card, and 3,000 notes of which the account may
// hold 2,000) proposes a handful of commands, and reports every line as a
// command per line did.
func TestLabelImportOfThousandsOfLinesProposesAHandful(t *testing.T) {
	t.Parallel()
	l, store := countedLabelsTest(t, actors.PlanExtended, csvAddr{address: csvAddrA, confirmed: 3000, age: time.Hour, step: time.Hour})
	var file strings.Builder
	file.WriteString(labelFileLine("addr", csvAddrA, "Savings"))
	for p := range 3000 {
		file.WriteString(labelFileLine("tx", l.txOf(p), fmt.Sprint("payment ", p)))
	}
	before := store.proposed.Load()
	r := l.importFile(file.String())
	proposed := store.proposed.Load() - before
	if r.Imported != 2001 || r.Skipped != 1000 || r.Results[2000].Outcome != labelImported || r.Results[2001].Reason != "the account holds its limit of 2000 notes" {
		t.Fatalf("report: %d imported, %d skipped; line %d %s, line %d %q", r.Imported, r.Skipped, r.Results[2000].Line, r.Results[2000].Outcome, r.Results[2001].Line, r.Results[2001].Reason)
	}
	if want := (2001 + actors.ImportLabelsLinesMax - 1) / actors.ImportLabelsLinesMax; proposed != int64(want) {
		t.Fatalf("the import proposed %d commands, want %d", proposed, want)
	}
	if got := strings.Count(l.export(), "\n"); got != 2001 {
		t.Fatalf("the export holds %d labels", got)
	}
}

// One import per account at a time: a second one while the first runs is
// refused with 409 CONFLICT and changes nothing; another account imports
// meanwhile.
func TestLabelImportOnePerAccountAtATime(t *testing.T) {
	t.Parallel()
	l, store := countedLabelsTest(t, actors.PlanBase)
	proposing, release := make(chan struct{}), make(chan struct{})
	var first atomic.Bool
	first.Store(true)
	store.beforePropose = func(cmd *actors.Command) error {
		// The first import's first command waits until the second
		// import has had its answer.
		if first.CompareAndSwap(true, false) {
			close(proposing)
			<-release
		}
		return nil
	}
	firstReport := make(chan labelImportReport)
	go func() { firstReport <- l.importFile(labelFileLine("addr", someAddress(t, 1), "first")) }()
	<-proposing
	status, body := l.post(labelFileLine("addr", someAddress(t, 2), "second"))
	var refusal map[string]string
	json.Unmarshal(body, &refusal)
	if status != http.StatusConflict || refusal["code"] != string(actors.CodeConflict) || refusal["error"] == "" {
		t.Errorf("a second import while the first runs: %d %s", status, body)
	}
	other, _ := countedLabelsTest(t, actors.PlanBase)
	if r := other.importFile(labelFileLine("addr", someAddress(t, 3), "elsewhere")); r.Imported != 1 {
		t.Errorf("another account's import meanwhile: %+v", r)
	}
	close(release)
	if r := <-firstReport; r.Imported != 1 {
		t.Fatalf("the first import: %+v", r)
	}
	if export := l.export(); strings.Contains(export, "second") || !strings.Contains(export, "first") {
		t.Fatalf("after both: %s", export)
	}
	if r := l.importFile(labelFileLine("addr", someAddress(t, 2), "second")); r.Imported != 1 {
		t.Fatalf("an import once the first is done: %+v", r)
	}
}

// While a voter does not apply ImportLabels yet (a rolling upgrade), the
// import sends one command a line, as before, and reports the same.
func TestLabelImportDuringAnUpgradeSendsOneCommandALine(t *testing.T) {
	t.Parallel()
	l, store := countedLabelsTest(t, actors.PlanBase)
	store.beforePropose = func(cmd *actors.Command) error {
		if _, imports := cmd.Payload.(*actors.ImportLabels); imports {
			return &clustererr.VersionError{Want: uint32(actors.KindImportLabels.FeatureVersion()), Behind: []string{"node-2 (version 2)"}}
		}
		return nil
	}
	before := store.proposed.Load()
	r := l.importFile(labelFileLine("addr", someAddress(t, 1), "one") + labelFileLine("addr", someAddress(t, 2), "two") + labelFileLine("addr", someAddress(t, 1), "one again"))
	if got := strings.Join(outcomes(r), " "); got != "1:skipped 2:imported 3:imported" || !strings.HasPrefix(r.Results[0].Reason, "a later line") {
		t.Fatalf("report: %+v", r)
	}
	if n := store.proposed.Load() - before; n != 2 {
		t.Fatalf("%d commands applied for two lines to import", n)
	}
}

// The room a line the rule refused would have taken goes to a later line:
// with room for one card, a card whose name the rule refuses does not
// keep the next one out.
func TestLabelImportRoomLeftByARefusedLineIsUsed(t *testing.T) {
	t.Parallel()
	l, _ := countedLabelsTest(t, actors.PlanBase)
	for i := range 9 {
		l.mustJSON("POST", "/owner/v1/portfolio/cards", map[string]string{"address": someAddress(t, i)}, http.StatusCreated)
	}
	r := l.importFile(labelFileLine("addr", someAddress(t, 20), strings.Repeat("n", 101)) + labelFileLine("addr", someAddress(t, 21), "fits") + labelFileLine("addr", someAddress(t, 22), "no room"))
	if got := strings.Join(outcomes(r), " "); got != "1:skipped 2:imported 3:skipped" {
		t.Fatalf("outcomes %s: %+v", got, r.Results)
	}
	if !strings.HasPrefix(r.Results[0].Reason, "the label cannot be used for an Account card") || !strings.HasPrefix(r.Results[2].Reason, "the plan is full") {
		t.Fatalf("reasons: %q, %q", r.Results[0].Reason, r.Results[2].Reason)
	}
}
