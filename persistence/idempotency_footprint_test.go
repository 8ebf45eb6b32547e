package persistence

import (
	"bytes"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/addrwatch/addrwatch/actors"
)

// The memory an account's idempotency records cost a node: one agent makes
// idempotent writes at the most the spec's limits allow a key (240
// requests a minute, one every 250 ms), alternately creating an Account
// card and deleting it, each with a fresh Idempotency-Key, all inside one
// replay window.
//
//	go test ./persistence -run '^$' -bench IdempotencyRecordsFootprint -benchtime 1x
//
// "records" is the number of writes made; "kept" is how many records the
// account holds afterwards.

// fpIdemWriteStep is the spacing of one key's requests under the spec's
// per-key limit (240 a minute), a little less so that all of them fall
// within 24 hours.
const fpIdemWriteStep = time.Minute/240 - time.Millisecond

// buildIdempotencyAccount makes an account whose agent has made writes
// idempotent writes.
func buildIdempotencyAccount(t testing.TB, id string, writes int) *actors.Account {
	t.Helper()
	b := &fpBuilder{t: t, id: id, at: fpAt0, cred: fpAgentCredential(id)}
	b.agent = actors.Principal{Kind: actors.PrincipalAgent, KeyID: b.cred.ID}
	b.apply(actors.Principal{Kind: actors.PrincipalSystem}, &actors.CreateAccount{Plan: actors.PlanExtended, OwnerSecretHash: fpHash("aws." + id),
		PasswordHash: "$2a$10$" + id, FirstSpaceID: fpID(id + "/space/0")}, nil, time.Second)
	b.apply(actors.Principal{Kind: actors.PrincipalOwner}, &actors.CreateKey{KeyID: b.cred.ID, Name: "Bookkeeping agent",
		Capability: actors.LevelWrite, Hash: b.cred.Hash}, nil, time.Second)
	name, note := fpText(id+"/name", 20, 40), fpText(id+"/note", 20, 40)
	var card actors.CardView
	for i := range writes {
		seed := fmt.Sprintf("%s/write/%d", id, i)
		if i%2 == 0 {
			path := "/v1/portfolio/cards"
			res := b.apply(b.agent, &actors.CreatePortfolioCard{CardID: fpID(seed), Address: fpAddress(t, id+"/address"),
				CardFields: actors.CardFields{Name: &name, Note: &note}}, fpIdemRequest(seed, "POST", path), fpIdemWriteStep)
			card = fpBody[actors.CardEnvelope](t, res).Card
			continue
		}
		path := "/v1/portfolio/cards/" + card.ID
		b.apply(b.agent, &actors.DeletePortfolioCard{CardID: card.ID, ExpectedVersion: card.Version}, fpIdemRequest(seed, "DELETE", path), fpIdemWriteStep)
	}
	return b.a
}

// fpIdemRequest is an Idempotency-Key request as the edge makes it, with a
// token shaped like a UUID (the usual choice of clients).
func fpIdemRequest(seed, method, path string) *actors.IdempotencyRequest {
	h := fpHash("idem/" + seed)
	token := fmt.Sprintf("%x-%x-%x-%x-%x", h[0:4], h[4:6], h[6:8], h[8:10], h[10:16])
	return &actors.IdempotencyRequest{Token: token, Method: method, Path: path, BodyHash: fpHash("body/" + seed), PerPrincipal: true}
}

// fpIdemPrincipalBound is the per-principal bound of actors: the spec's
// per-key limit over 24 hours (240 + 240 × 1,440).
const fpIdemPrincipalBound = actors.AgentRequestsPerKeyPerMinute * (1 + 24*60)

func BenchmarkIdempotencyRecordsFootprint(b *testing.B) {
	// 2,000 is the account-wide bound before issue 13; the second run is
	// one principal at its bound now.
	for _, writes := range []int{2_000, fpIdemPrincipalBound} {
		b.Run(fmt.Sprintf("records=%d", writes), func(b *testing.B) {
			const id = "acctidempotency1"
			before := fpHeap()
			a := buildIdempotencyAccount(b, id, writes)
			after := fpHeap()
			heap := float64(after) - float64(before)
			encoded := fpEncode(b, a)
			kept := a.Idempotency.Len()
			snap := fpSnapshot(b, [][]byte{encoded})
			encoded = nil
			// The snapshot is live in both readings, so only the restored
			// account counts.
			restoredBefore := fpHeap()
			restored, err := ReadSnapshot(bytes.NewReader(snap))
			if err != nil {
				b.Fatal(err)
			}
			restoredHeap := float64(fpHeap()) - float64(restoredBefore)
			runtime.KeepAlive(a)
			runtime.KeepAlive(restored)
			runtime.KeepAlive(snap)
			b.ReportMetric(float64(kept), "kept")
			b.ReportMetric(heap, "heap-B/account")
			b.ReportMetric(heap/float64(kept), "heap-B/record")
			b.ReportMetric(restoredHeap/float64(kept), "heap-B/record-restored")
			b.ReportMetric(float64(len(snap))/float64(kept), "snapshot-B/record")
		})
	}
}
