package actors

import (
	"encoding/json"
	"maps"
	"sync/atomic"
)

// Rendered answers. Agents read far more than anything writes, and an
// account's state changes only when a command applies to it, so the same
// read by the same key answers the same bytes until the next apply. A
// read the edge writes out as it is (RenderedQuery) is answered as its
// JSON, and the account's actor keeps that JSON (RenderCache) until it
// applies anything at all: the next read after an acknowledged write
// runs the query again. Authentication is not cached: every read checks
// its credential first, and the cache is keyed by what that check
// proved (the principal and its capability), so a key sees only what its
// own grants show it.

// Rendered is an answer rendered as the JSON the edge writes. It is
// shared by every read that hits the cache: never modify it.
type Rendered []byte

// AppendJSON implements JSONAppender.
func (r Rendered) AppendJSON(b []byte) ([]byte, error) { return append(b, r...), nil }

// sameFromState marks a query whose answer depends only on the account's
// applied state, the principal and its capability (not the time), so that
// its rendered answer may be kept between applies. keptAs is what the
// answer is kept by: a comparable value that holds every parameter of the
// query (not a pointer's address).
type sameFromState interface {
	Query
	keptAs() any
}

func (q MeQuery) keptAs() any            { return q }
func (q ListPortfolioQuery) keptAs() any { return q }

// sheetKept is a SheetQuery as a comparable value: its filters' values,
// not their addresses.
type sheetKept struct {
	spaceID            string
	offset, limit      int
	sparse             bool
	address, chain     string
	byAddress, byChain bool
}

func (q SheetQuery) keptAs() any {
	k := sheetKept{spaceID: q.SpaceID, offset: q.Offset, limit: q.Limit, sparse: q.Sparse}
	if q.Address != nil {
		k.address, k.byAddress = *q.Address, true
	}
	if q.Chain != nil {
		k.chain, k.byChain = *q.Chain, true
	}
	return k
}

// RenderedQuery is a query whose answer the edge writes out as it is:
// its successful answer comes back Rendered. Make one with Render.
type RenderedQuery struct{ q sameFromState }

// Render is q for an edge that writes its answer out as it is: a query
// whose answer may be kept between applies (MeQuery, ListPortfolioQuery,
// SheetQuery) becomes a RenderedQuery, any other stays as it is.
func Render(q Query) Query {
	switch q.(type) {
	case MeQuery:
		return renderedMe
	case ListPortfolioQuery:
		return renderedPortfolio
	}
	if s, keepable := q.(sameFromState); keepable {
		return RenderedQuery{q: s}
	}
	return q
}

// The queries without parameters, rendered and boxed once: boxing a
// RenderedQuery as a Query costs an allocation, and these two are the
// agents' most common reads.
var (
	renderedMe        Query = RenderedQuery{q: MeQuery{}}
	renderedPortfolio Query = RenderedQuery{q: ListPortfolioQuery{}}
)

// Unrendered is the query r renders.
func (r RenderedQuery) Unrendered() Query { return r.q }

func (r RenderedQuery) run(a *Account, who Principal, capability Level, now int64) Result {
	res := r.q.run(a, who, capability, now)
	if v, isSheet := res.Body.(SheetView); isSheet && len(v.Rows) > renderRowsMax {
		// A long page is rendered by the edge, outside the actor, as any
		// other answer: rendering it here would hold the account's other
		// readers for as long, to keep an answer too large to keep.
		return res
	}
	return render(res)
}

// renderRowsMax is the longest Sheet page the actor renders.
const renderRowsMax = 20

// render turns a successful answer into its JSON, as the edge would write
// it (AppendJSON). A refusal stays as it is.
func render(res Result) Result {
	if res.err != nil || res.Body == nil {
		return res
	}
	b, err := AppendJSON(nil, res.Body)
	if err != nil {
		return fail(Errorf(CodeInternal, "internal error"))
	}
	return Result{Status: res.Status, Body: Rendered(b)}
}

// AppendJSON appends body's JSON to b, as an answer is written: a view
// that appends its own JSON (JSONAppender) does so, any other goes
// through encoding/json.
func AppendJSON(b []byte, body any) ([]byte, error) {
	if a, fast := body.(JSONAppender); fast {
		return a.AppendJSON(b)
	}
	j, err := json.Marshal(body)
	return append(b, j...), err
}

// RenderCache keeps one account's rendered answers between applies. It
// belongs to the account's actor, not to the account: it is no part of
// the replicated state, and the actor calls Forget before it applies
// anything or replaces the state. Only the actor adds to it; anyone may
// read it (Kept), so that a repeated read is answered without waiting
// for the actor: what is kept is an immutable map, replaced whole by
// each answer the actor keeps and dropped whole by Forget.
type RenderCache struct {
	kept atomic.Pointer[keptAnswers]
}

// keptAnswers is one generation of kept answers. Once published it is
// never changed.
type keptAnswers struct {
	answers map[renderKey]keptAnswer
	bytes   int
}

// renderKey is what an answer is the same for: the query (with its
// parameters, sameFromState.keptAs) and the credential that asked. The
// credential stands for one principal with one capability until the
// account applies something, so its answer is the same until Forget.
type renderKey struct {
	q    any
	kind CredentialKind
	id   string
}

// keptAnswer is an answer with what its credential must still show to be
// given it: the hash of its secret and, for a session, when it expires
// (the two things Authenticate checks that the key does not hold).
type keptAnswer struct {
	hash      Hash
	expiresAt int64 // sessions only; 0 for any other credential
	res       Result
}

// An account keeps at most renderCacheBytesMax of rendered answers and
// renderCacheAnswersMax of them, none larger than renderAnswerBytesMax (a
// long Sheet page is rendered each time), so that an account read once
// and then left alone holds little, and keeping one more answer (a copy
// of the map) costs little: what it keeps stays until its next apply.
// Past either bound the cache starts again empty.
const (
	renderCacheBytesMax   = 64 << 10
	renderCacheAnswersMax = 128
	renderAnswerBytesMax  = 16 << 10
)

// Forget drops every kept answer. The actor calls it for every command
// it applies (whether the command changes anything or is refused: telling
// them apart is not worth a stale answer) and for every state it takes
// whole (a restore), before it changes the state: a read that starts
// after the apply is acknowledged cannot find what was kept before it.
func (c *RenderCache) Forget() { c.kept.Store(nil) }

// Kept is the answer kept for r asked with cred, if the account has kept
// one since it last applied anything and cred would authenticate as the
// credential that asked for it: the same kind and ID, the same secret
// (compared in constant time) and, for a session, not yet expired at
// cred.Now. It is safe to call from any goroutine, concurrently with the
// actor; a nil cache keeps nothing.
func (c *RenderCache) Kept(cred Credential, r RenderedQuery) (Result, bool) {
	if c == nil || cred.Kind == CredentialSystem {
		return Result{}, false
	}
	kept := c.kept.Load()
	if kept == nil {
		return Result{}, false
	}
	a, found := kept.answers[renderKey{q: r.q.keptAs(), kind: cred.Kind, id: cred.ID}]
	if !found || !hashEqual(a.hash, cred.Hash) || (cred.Kind == CredentialSession && cred.Now >= a.expiresAt) {
		return Result{}, false
	}
	return a.res, true
}

// answer runs r for who, whom cred authenticated as on a, or answers
// what it answered last time if the account has applied nothing since.
func (c *RenderCache) answer(a *Account, cred Credential, who Principal, capability Level, r RenderedQuery) Result {
	if res, kept := c.Kept(cred, r); kept {
		return res
	}
	res := r.run(a, who, capability, cred.Now)
	body, rendered := res.Body.(Rendered)
	if res.err != nil || !rendered || len(body) > renderAnswerBytesMax || cred.Kind == CredentialSystem {
		return res
	}
	answer := keptAnswer{hash: cred.Hash, res: res}
	if cred.Kind == CredentialSession {
		answer.expiresAt = a.session(cred.ID).ExpiresAt
	}
	c.keep(renderKey{q: r.q.keptAs(), kind: cred.Kind, id: cred.ID}, answer, len(body))
	return res
}

// keep publishes the kept answers with k's answer added (or replaced): a
// new map, so that a reader holding the old one never sees it change.
func (c *RenderCache) keep(k renderKey, answer keptAnswer, size int) {
	next := &keptAnswers{bytes: size}
	if old := c.kept.Load(); old != nil && old.bytes+size <= renderCacheBytesMax && len(old.answers) < renderCacheAnswersMax {
		next.answers = make(map[renderKey]keptAnswer, len(old.answers)+1)
		maps.Copy(next.answers, old.answers)
		next.bytes += old.bytes
	} else {
		next.answers = make(map[renderKey]keptAnswer, 8)
	}
	next.answers[k] = answer
	c.kept.Store(next)
}
