package actors

import (
	"fmt"
	"strings"
	"testing"
)

// Benchmarks of the Sheet on a full Sheet: 1,000 rows of five 40-character
// cells, written and read through Apply and RunQuery as the actor does
// (so each write also pays for its audit event; the budget is off).

type sheetBench struct {
	b    *testing.B
	a    *Account
	at   int64
	w    Principal
	cred Credential
	id   string
}

const sheetBenchSpace = "space-sheet"

// benchCells is row i's content in generation gen: every cell 40
// characters, the Address unique per row.
func benchCells(i, gen int) [sheetColumnCount]string {
	return [sheetColumnCount]string{
		fmt.Sprintf("bc1q%036d", i),
		strings.Repeat(".", 33) + "bitcoin",
		fmt.Sprintf("%040x", i*7919+gen),
		fmt.Sprintf("2026-03-01T12:00:00Z%020d", gen),
		fmt.Sprintf("note %035d", i+gen),
	}
}

func newSheetBench(b *testing.B) *sheetBench {
	b.Helper()
	sb := &sheetBench{b: b, at: t0, w: Principal{Kind: PrincipalAgent, KeyID: "kw"}}
	sb.cred = Credential{Kind: CredentialAPIKey, AccountID: testAccountID, ID: "kw", Hash: hashOf("kw")}
	a, res := Apply(nil, sb.cmd(systemP, &CreateAccount{Plan: PlanExtended, OwnerSecretHash: hashOf(testOwnerSecret), PasswordHash: testPasswordHash, FirstSpaceID: testFirstSpaceID}))
	if res.err != nil {
		b.Fatal(res.err)
	}
	sb.a = a
	sb.must(ownerP, &CreateKey{KeyID: "kw", Name: "writer", Capability: LevelWrite, Hash: hashOf("kw")})
	sb.must(ownerP, &SetGrant{Resource: ResourceSpace, ID: testFirstSpaceID, Level: LevelWrite})
	sb.must(sb.w, &CreateSpace{SpaceID: sheetBenchSpace, ExpectedBookmarkRevision: versionString(sb.a.BookmarkRevision), Name: "Sheet", Type: SpaceSheet})
	sb.id = sheetBenchSpace
	for start := 0; start < sheetRowCount; start += 100 {
		rows := make([]SheetRowInput, 0, 100)
		for i := start; i < start+100; i++ {
			rows = append(rows, rowIn(i, benchCells(i, 0)))
		}
		sb.must(sb.w, &PatchSheet{SheetWrite: sb.sw(), Rows: rows})
	}
	if n := len(sb.sheet().Rows); n != sheetRowCount {
		b.Fatalf("bench sheet holds %d rows", n)
	}
	return sb
}

func (sb *sheetBench) cmd(p Principal, payload Payload) *Command {
	sb.at += 1_000_000 // 1 ms
	return &Command{Account: testAccountID, At: sb.at, Principal: p, Payload: payload}
}

func (sb *sheetBench) must(p Principal, payload Payload) Result {
	next, res := Apply(sb.a, sb.cmd(p, payload))
	if res.err != nil {
		sb.b.Fatalf("%T: %v", payload, res.err)
	}
	sb.a = next
	return res
}

func (sb *sheetBench) sheet() *Sheet {
	_, s := sb.a.space(sb.id)
	return s.Sheet
}

func (sb *sheetBench) sw() SheetWrite {
	return SheetWrite{SpaceID: sb.id, ExpectedRevision: sb.sheet().Revision}
}

// BenchmarkSheetPutUpdate upserts onto the unique match of an existing row.
func BenchmarkSheetPutUpdate(b *testing.B) {
	sb := newSheetBench(b)
	inputs := make([][]string, 1000)
	for i := range inputs {
		c := benchCells(i, 1)
		inputs[i] = c[:]
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res := sb.must(sb.w, &PutSheetRow{SheetWrite: sb.sw(), Cells: inputs[(i*37)%1000]})
		if res.Body.(SheetPutView).Created {
			b.Fatal("update created a row")
		}
	}
}

// resetEvery is how many Sheets a benchmark that must undo its change
// writes in turn before it undoes them all, outside the timer: stopping
// the timer reads memory statistics, which would otherwise cost more than
// the operation measured.
const resetEvery = 64

func newSheetBenches(b *testing.B) []*sheetBench {
	sbs := make([]*sheetBench, resetEvery)
	for i := range sbs {
		sbs[i] = newSheetBench(b)
	}
	return sbs
}

// BenchmarkSheetPutCreate upserts a new key into the only empty slot of an
// otherwise full Sheet (the slot is emptied again outside the timer).
func BenchmarkSheetPutCreate(b *testing.B) {
	for _, slot := range []int{0, 500, 999} {
		b.Run(fmt.Sprintf("slot=%d", slot), func(b *testing.B) {
			sbs := newSheetBenches(b)
			emptyAll := func() {
				for _, sb := range sbs {
					sb.must(sb.w, &PatchSheet{SheetWrite: sb.sw(), Rows: []SheetRowInput{rowIn(slot, [sheetColumnCount]string{})}})
				}
			}
			emptyAll()
			c := benchCells(sheetRowCount+1, 2) // a key no row has
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				sb := sbs[i%resetEvery]
				res := sb.must(sb.w, &PutSheetRow{SheetWrite: sb.sw(), Cells: c[:]})
				if v := res.Body.(SheetPutView); !v.Created || v.Index != slot {
					b.Fatalf("create went to %+v", v)
				}
				if i%resetEvery == resetEvery-1 {
					b.StopTimer()
					emptyAll()
					b.StartTimer()
				}
			}
		})
	}
}

// BenchmarkSheetPatch100 rewrites 100 rows (content alternates, so every
// row changes).
func BenchmarkSheetPatch100(b *testing.B) {
	sb := newSheetBench(b)
	var batches [2][]SheetRowInput
	for gen := range batches {
		for i := 400; i < 500; i++ {
			batches[gen] = append(batches[gen], rowIn(i, benchCells(i, gen+1)))
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sb.must(sb.w, &PatchSheet{SheetWrite: sb.sw(), Rows: batches[i%2]})
	}
}

// BenchmarkSheetDeleteShift deletes index 0 of a full Sheet, shifting 999
// rows (slot 999 is refilled outside the timer).
func BenchmarkSheetDeleteShift(b *testing.B) {
	sbs := newSheetBenches(b)
	refill := benchCells(sheetRowCount+7, 3)
	refillAll := func(round int) {
		for j, sb := range sbs {
			refill[0] = fmt.Sprintf("bc1q%036d", sheetRowCount+round*resetEvery+j) // keep keys unique
			sb.must(sb.w, &PatchSheet{SheetWrite: sb.sw(), Rows: []SheetRowInput{rowIn(999, refill)}})
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sb := sbs[i%resetEvery]
		res := sb.must(sb.w, &DeleteSheetRow{SheetWrite: sb.sw(), Index: 0})
		if res.Body.(SheetDeletedView).ShiftedRows != 999 {
			b.Fatalf("delete shifted %d rows", res.Body.(SheetDeletedView).ShiftedRows)
		}
		if i%resetEvery == resetEvery-1 {
			b.StopTimer()
			refillAll(i / resetEvery)
			b.StartTimer()
		}
	}
}

// BenchmarkSheetSparseReadAll reads the whole full Sheet in sparse pages
// (five pages of 200 rows).
func BenchmarkSheetSparseReadAll(b *testing.B) {
	sb := newSheetBench(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rows, pages := 0, 0
		q := SheetQuery{SpaceID: sb.id, Limit: 100, Sparse: true}
		for {
			v := RunQuery(sb.a, sb.cred, q).Body.(SheetView)
			rows += len(v.Rows)
			pages++
			if v.NextOffset == nil {
				break
			}
			q.Offset = *v.NextOffset
		}
		if rows != sheetRowCount || pages != 5 {
			b.Fatalf("read %d rows in %d pages", rows, pages)
		}
	}
}

// BenchmarkSheetFilteredRead reads one key through the index (both
// filters) and through a scan (address only).
func BenchmarkSheetFilteredRead(b *testing.B) {
	sb := newSheetBench(b)
	addr, chain := benchCells(500, 0)[0], benchCells(500, 0)[1]
	for name, q := range map[string]SheetQuery{
		"index": {SpaceID: sb.id, Limit: 100, Address: &addr, Chain: &chain},
		"scan":  {SpaceID: sb.id, Limit: 100, Address: &addr},
	} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if v := RunQuery(sb.a, sb.cred, q).Body.(SheetView); len(v.Rows) != 1 {
					b.Fatalf("filtered read returned %d rows", len(v.Rows))
				}
			}
		})
	}
}

// BenchmarkSheetDenseRead100 reads one dense page of 100 slots.
func BenchmarkSheetDenseRead100(b *testing.B) {
	sb := newSheetBench(b)
	q := SheetQuery{SpaceID: sb.id, Offset: 0, Limit: 100}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if v := RunQuery(sb.a, sb.cred, q).Body.(SheetView); len(v.Rows) != 100 {
			b.Fatalf("dense read returned %d rows", len(v.Rows))
		}
	}
}
