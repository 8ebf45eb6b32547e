package main

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg"
)

// Sheet geometry from the spec: 1,000 row slots, at most 100 rows a PATCH.
const (
	sheetSlots    = 1000
	sheetPatchMax = 100
)

// sheetSpace is one Sheet Space and the revision its owning worker last
// saw. Each Sheet belongs to exactly one worker during a run, so the
// revision from each answer is the next expected_revision and no request
// is spent re-reading it.
type sheetSpace struct {
	id       string
	revision int64
	dirty    bool // rows may be stored; cleared before a scenario that needs a known start
}

func sheetURL(target, spaceID string) string {
	return target + "/v1/bookmark-spaces/" + spaceID + "/sheet"
}

// sheetAnswer is the part of any Sheet answer a worker needs.
type sheetAnswer struct {
	Revision     *int64 `json:"revision"`
	Created      *bool  `json:"created"`
	DeletedIndex *int   `json:"deleted_index"`
}

// sheetWriter is the revision bookkeeping every Sheet-writing worker
// shares: learn the revision from each answer, and after a 409
// STALE_VERSION spend the next request on a re-read, as the spec asks.
type sheetWriter struct {
	sheet  *sheetSpace
	url    string
	key    string
	reread bool
	req    request
	body   []byte
}

func newSheetWriter(target, key string, s *sheetSpace) *sheetWriter {
	return &sheetWriter{sheet: s, url: sheetURL(target, s.id), key: key}
}

// rereadRequest reads one slot: the cheapest answer that carries the
// revision.
func (s *sheetWriter) rereadRequest() *request {
	s.req = request{op: "GET …/sheet?limit=1 (re-read after 409)", method: "GET", url: s.url + "?limit=1", bearer: s.key}
	return &s.req
}

// write builds a Sheet write whose body is prefix + expected_revision +
// rest, e.g. `{"expected_revision":` 7 `,"cells":[…]}`.
func (s *sheetWriter) write(op, method string, rest []byte) *request {
	s.body = append(s.body[:0], `{"expected_revision":`...)
	s.body = strconv.AppendInt(s.body, s.sheet.revision, 10)
	s.body = append(s.body, rest...)
	s.req = request{op: op, method: method, url: s.url, bearer: s.key, body: s.body}
	return &s.req
}

// observe learns from any Sheet answer and reports whether it succeeded.
func (s *sheetWriter) observe(resp *response) (sheetAnswer, bool) {
	var ans sheetAnswer
	if !resp.ok() {
		if resp.status == 409 && errorCode(resp.body) == "STALE_VERSION" {
			s.reread = true
		}
		return ans, false
	}
	if json.Unmarshal(resp.body, &ans) == nil && ans.Revision != nil {
		s.sheet.revision = *ans.Revision
	}
	s.reread = false
	return ans, true
}

// Row content. Cells are plain text to the server; they look like what an
// agent would keep (an address, its chain, a transaction, a date, a note)
// so that body sizes are realistic.

// rowCells returns the five cells of row key k in series name.
func rowCells(series string, k int) []string {
	h := sha256.Sum256(fmt.Appendf(nil, "%s/%d", series, k))
	return []string{deterministicAddress(h[:20]), "bitcoin", hex.EncodeToString(h[:]), "2026-01-31", fmt.Sprintf("bench %s row %d", series, k)}
}

// upsertBodies pre-encodes `,"cells":[…]}` for n keys of a series: the
// rest of a PUT body after its expected_revision.
func upsertBodies(series string, n int) [][]byte {
	out := make([][]byte, n)
	for k := range out {
		out[k] = fmt.Appendf(nil, `,"cells":%s}`, jsonStrings(rowCells(series, k)...))
	}
	return out
}

// patchRows encodes `,"rows":[…]}` for slots from..to-1, with cells from
// cellsOf.
func patchRows(from, to int, cellsOf func(i int) []string) []byte {
	b := []byte(`,"rows":[`)
	for i := from; i < to; i++ {
		if i > from {
			b = append(b, ',')
		}
		b = fmt.Appendf(b, `{"index":%d,"cells":%s}`, i, jsonStrings(cellsOf(i)...))
	}
	return append(b, "]}"...)
}

// deterministicAddress turns 20 bytes into a mainnet P2PKH address, so a
// row key is the same on every run.
func deterministicAddress(hash160 []byte) string {
	a, err := btcutil.NewAddressPubKeyHash(hash160, &chaincfg.MainNetParams)
	if err != nil {
		panic(err) // 20 bytes always make an address
	}
	return a.EncodeAddress()
}

// randomAddress returns a fresh valid address, for Account and bookmark
// cards: the server refuses a duplicate address in one account.
func randomAddress() string {
	var h [20]byte
	rand.Read(h[:])
	return deterministicAddress(h[:])
}
