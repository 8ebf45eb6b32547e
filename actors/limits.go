package actors

import "time"

// Every bound of the spec and of the product, named after its unit and
// enforced where it is named.
const (
	cardNameCharsMax = 100  // the spec leaves name length to us
	cardNoteCharsMax = 1000 // the spec leaves note length to us
	keyNameCharsMax  = 100
	keysMax          = KeysMax
	sessionsMax      = 20 // live owner sessions per account; the oldest is dropped

	idempotencyTokenCharsMin = 16
	idempotencyTokenCharsMax = 128
	idempotencyWindow        = 24 * time.Hour

	// idempotencyRecordsPerPrincipalMax is the most requests one API key
	// can make in a replay window under the spec's per-key limit: a full
	// bucket of AgentRequestsPerKeyPerMinute, then that many a minute for
	// 1,440 minutes (240 + 240 × 1,440 = 345,840). Every idempotent write
	// is such a request, so a key within the limits never loses a record
	// before its 24 hours. The owner, whom the Agent API limits do not
	// govern, is held to the same number; past it (or with --limits off) a
	// principal's own oldest record makes room.
	idempotencyRecordsPerPrincipalMax = AgentRequestsPerKeyPerMinute + AgentRequestsPerKeyPerMinute*int(idempotencyWindow/time.Minute)
	// idempotencyPrincipalsMax bounds the principals holding records: every
	// live key, the owner and the system (revoked keys' records are dropped).
	idempotencyPrincipalsMax = keysMax + 2
	// idempotencyRecordsBefore13Max is the account-wide bound of log entries
	// written before records were kept per principal (issue 13); replaying
	// them must evict what it evicted then.
	idempotencyRecordsBefore13Max = 2000

	auditEventsMax = 2000 // per account
	auditAgeMax    = 7 * 24 * time.Hour
)

// KeysMax is the most live API keys an account holds, whatever its
// plan; the site says it beside the create form it hides.
const KeysMax = 100

// AgentRequestsPerKeyPerMinute is the spec's per-key limit on Agent API
// requests ("Agent authentication: 240 requests per minute per client IP
// and per key"). The edge enforces it; the idempotency bound derives from it.
const AgentRequestsPerKeyPerMinute = 240

// ColorKeys is the spec's list of allowed color_key values, in its order.
var ColorKeys = []string{"amber", "green", "blue", "rose", "violet", "teal", "slate", "orange", "cyan", "pink"}

// defaultColorKey is used when a card is created without a color.
const defaultColorKey = "amber"
