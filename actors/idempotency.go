package actors

import (
	"encoding/json"
	"regexp"
)

// IdempotencyRequest is what the edge derives from an Idempotency-Key
// header: the token and the request it names. BodyHash is the SHA-256 of
// the canonical JSON body, so that reformatted JSON is the same request.
type IdempotencyRequest struct {
	Token    string `json:"token"`
	Method   string `json:"method"`
	Path     string `json:"path"`
	BodyHash Hash   `json:"body_hash"`
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
}

var idempotencyTokenPattern = regexp.MustCompile(`^[A-Za-z0-9._~-]+$`)

// ValidateIdempotencyToken checks the spec's shape for an Idempotency-Key.
func ValidateIdempotencyToken(token string) error {
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
		return "key:" + p.KeyID
	case PrincipalOwner:
		return "owner"
	}
	return "system"
}

// idempotencyLookup finds a live record for the principal's token.
func (a *Account) idempotencyLookup(p Principal, token string, at int64) *IdempotencyRecord {
	who := principalKey(p)
	cutoff := at - int64(idempotencyWindow)
	for i := len(a.Idempotency) - 1; i >= 0; i-- {
		r := a.Idempotency[i]
		if r.Principal == who && r.Request.Token == token && r.At > cutoff {
			return r
		}
	}
	return nil
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

// remember stores a successful result for replay, evicting the oldest
// record when the account holds the most it may.
func (a *Account) remember(c *Command, res Result, ref ResourceRef) {
	var body json.RawMessage
	if res.Body != nil {
		b, err := json.Marshal(res.Body)
		if err != nil {
			panic("actors: result body does not encode: " + err.Error())
		}
		body = b
	}
	if len(a.Idempotency) >= idempotencyRecordsMax {
		a.Idempotency = a.Idempotency[1:] // see recordEvent on reslicing
	}
	a.Idempotency = append(a.Idempotency, &IdempotencyRecord{
		Principal: principalKey(c.Principal),
		Request:   *c.Idempotency,
		At:        c.At,
		Status:    res.Status,
		Body:      body,
		Resource:  ref,
	})
}

// pruneIdempotency drops records older than the replay window. Records are
// in apply order, so the expired ones are a prefix (leader clocks may step
// back slightly across an election; such a record simply lives a little
// longer).
func (a *Account) pruneIdempotency(at int64) {
	cutoff := at - int64(idempotencyWindow)
	n := 0
	for n < len(a.Idempotency) && a.Idempotency[n].At <= cutoff {
		n++
	}
	if n > 0 {
		a.Idempotency = a.Idempotency[n:]
	}
}
