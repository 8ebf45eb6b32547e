package actors

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
)

// IdempotencyRequest is what the edge derives from an Idempotency-Key
// header: the token and the request it names. BodyHash is the SHA-256 of
// the canonical JSON body, so that reformatted JSON is the same request.
//
// PerPrincipal is set by every edge since issue 13: the record of this
// request is bounded per principal. Log entries written before it lack the
// field and keep the bound they were applied under (the account's 2,000
// newest records), so that replaying them reaches the state it reached.
type IdempotencyRequest struct {
	Token        string `json:"token"`
	Method       string `json:"method"`
	Path         string `json:"path"`
	BodyHash     Hash   `json:"body_hash"`
	PerPrincipal bool   `json:"per_principal,omitempty"`
}

// ResourceRef names the resource a result is about, so a replay can check
// that the caller may still see it.
type ResourceRef struct {
	Kind    ResourceKind `json:"kind"`
	ID      string       `json:"id,omitempty"`
	SpaceID string       `json:"space_id,omitempty"`
}

// ResourceKind is the kind of a resource named in results and audit events.
type ResourceKind string

const (
	ResourcePortfolioCard ResourceKind = "portfolio_card"
	ResourceSpace         ResourceKind = "space"
	ResourceBookmarkCard  ResourceKind = "bookmark_card"
	ResourceAccount       ResourceKind = "account"
	ResourceKey           ResourceKind = "key"
	ResourceNote          ResourceKind = "note"
)

// IdempotencyRecord is a successful result kept for replay. Only successes
// are kept: a failed request changed nothing, so retrying it is safe.
type IdempotencyRecord struct {
	Principal string             `json:"principal"` // tokens are separate per API key
	Request   IdempotencyRequest `json:"request"`
	At        int64              `json:"at"`
	Status    int                `json:"status"`
	Body      json.RawMessage    `json:"body,omitempty"`
	Resource  ResourceRef        `json:"resource"`

	seq uint64 // apply order within the account (IdempotencyRecords)
}

var idempotencyTokenPattern = regexp.MustCompile(`^[A-Za-z0-9._~-]+$`)

// ValidateIdempotencyToken checks the spec's shape for an Idempotency-Key.
func ValidateIdempotencyToken(token string) *Error {
	if len(token) < idempotencyTokenCharsMin || len(token) > idempotencyTokenCharsMax {
		return Errorf(CodeValidation, "Idempotency-Key must be %d to %d characters", idempotencyTokenCharsMin, idempotencyTokenCharsMax)
	}
	if !idempotencyTokenPattern.MatchString(token) {
		return Errorf(CodeValidation, "Idempotency-Key may hold only letters, digits and . _ ~ -")
	}
	return nil
}

// principalKey names whose token namespace a request belongs to.
func principalKey(p Principal) string {
	switch p.Kind {
	case PrincipalAgent:
		return principalKeyPrefix + p.KeyID
	case PrincipalOwner:
		return "owner"
	}
	return "system"
}

// principalKeyPrefix starts the namespace of an API key.
const principalKeyPrefix = "key:"

// idempotencyLookup finds a live record for the principal's token.
func (a *Account) idempotencyLookup(p Principal, token string, at int64) *IdempotencyRecord {
	r := a.Idempotency.newest(principalKey(p), token)
	if r == nil || r.At <= at-int64(idempotencyWindow) {
		return nil
	}
	return r
}

// replay answers a repeated request from its record. Access is checked
// again: when the caller can no longer see the resource, the saved details
// are withheld.
func (a *Account) replay(r *IdempotencyRecord, req *IdempotencyRequest, p Principal, capability Level) Result {
	if r.Request.Method != req.Method || r.Request.Path != req.Path || r.Request.BodyHash != req.BodyHash {
		return fail(Errorf(CodeIdempotencyConflict, "this Idempotency-Key was already used for a different request"))
	}
	if !a.canSee(p, capability, r.Resource) {
		return fail(Errorf(CodeNotFound, "the resource this request produced is not accessible"))
	}
	if len(r.Body) == 0 {
		return Result{Status: r.Status}
	}
	return Result{Status: r.Status, Body: r.Body}
}

// remember stores a successful result for replay, first making room under
// the bound the request was made under.
func (a *Account) remember(c *Command, res Result, ref ResourceRef) {
	var body json.RawMessage
	if res.Body != nil {
		b, err := json.Marshal(res.Body)
		if err != nil {
			panic("actors: result body does not encode: " + err.Error())
		}
		body = b
	}
	who := principalKey(c.Principal)
	if c.Idempotency.PerPrincipal {
		a.makeRoomPerPrincipal(who)
	} else {
		for a.Idempotency.Len() >= idempotencyRecordsBefore13Max {
			a.Idempotency.dropOldest(a.Idempotency.oldest())
		}
	}
	req := *c.Idempotency
	req.PerPrincipal = false // the record's bound is its queue's, not a request field
	a.Idempotency.add(&IdempotencyRecord{
		Principal: who,
		Request:   req,
		At:        c.At,
		Status:    res.Status,
		Body:      body,
		Resource:  ref,
	})
}

// makeRoomPerPrincipal makes room for one more record of principal who.
// A full queue gives up its own oldest record, never another principal's.
// Before a new queue starts, the queues of revoked keys go (their records
// can never be replayed), which bounds the queues by the live principals:
// every live key, the owner and the system.
func (a *Account) makeRoomPerPrincipal(who string) {
	rs := &a.Idempotency
	q := rs.queue(who)
	if q == nil {
		if len(rs.queues) >= idempotencyPrincipalsMax {
			for _, dead := range slices.Clone(rs.queues) {
				if !a.livePrincipal(dead.principal) {
					rs.dropQueue(dead)
				}
			}
		}
		return
	}
	if len(q.records) >= idempotencyRecordsPerPrincipalMax {
		rs.dropOldest(q)
	}
}

// livePrincipal reports whether a principal's records may still be
// replayed: an API key's only while the key exists (a revoked key never
// comes back, and apply refuses its commands before any lookup), the
// owner's and the system's always.
func (a *Account) livePrincipal(principal string) bool {
	if keyID, isKey := strings.CutPrefix(principal, principalKeyPrefix); isKey {
		return a.key(keyID) != nil
	}
	return true
}

// pruneIdempotency drops the records past the replay window.
func (a *Account) pruneIdempotency(at int64) { a.Idempotency.prune(at - int64(idempotencyWindow)) }
