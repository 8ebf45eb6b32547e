package actors

import "time"

// Every bound of the spec and of the product, named after its unit and
// enforced where it is named.
const (
	cardNameCharsMax = 100  // the spec leaves name length to us
	cardNoteCharsMax = 1000 // the spec leaves note length to us
	keyNameCharsMax  = 100
	keysMax          = 100 // live API keys per account
	sessionsMax      = 20  // live owner sessions per account; the oldest is dropped

	idempotencyTokenCharsMin = 16
	idempotencyTokenCharsMax = 128
	idempotencyWindow        = 24 * time.Hour
	idempotencyRecordsMax    = 2000 // per account; the oldest record goes first

	auditEventsMax = 2000 // per account
	auditAgeMax    = 7 * 24 * time.Hour
)

// ColorKeys is the spec's list of allowed color_key values, in its order.
var ColorKeys = []string{"amber", "green", "blue", "rose", "violet", "teal", "slate", "orange", "cyan", "pink"}

// defaultColorKey is used when a card is created without a color.
const defaultColorKey = "amber"
