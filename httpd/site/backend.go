package site

import (
	"time"

	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/actors"
	"github.com/addrwatch/addrwatch/httpd/views"
)

// What the site needs from the server it is mounted in, declared here in
// the site's own terms: the node (Store), the owner API's operations that
// are more than one command (Owner), and the HTTP edge's rules for the
// client and its errors (Edge). httpd implements all three over its own
// Store and Server; the site never reaches past them.

// Store is the node as the site reads and writes it. Each call is bounded
// by the server's request timeout.
type Store interface {
	// Query authenticates cred on its account and runs q on the leader's
	// applied state. A passive query (a request the page made on its own,
	// like the live view's polls) is not a use of the session, so it does
	// not keep an idle session alive. Read its answer with ask, typed.
	Query(cred actors.Credential, q actors.Query, passive bool) (actors.Result, error)
	// Propose replicates cmd and returns its result once applied.
	Propose(cmd *actors.Command) (actors.Result, error)
	// NewID returns a fresh opaque identifier for a card or a Space the
	// owner creates (generated before proposing, as the API's are).
	NewID() string
	// AccountForLogin returns the account whose login is login, compared
	// without regard to case.
	AccountForLogin(login string) (accountID string, found bool)
}

// CreatedKey is a new API key as the site shows it, once.
type CreatedKey struct {
	Name       string
	Capability actors.Level
	Key        string
}

// Owner is the owner API's operations the site runs for the signed-in
// owner, with the API's rules: the same password checks, back-off,
// upstream checks and downloads. Each takes the request, whose client IP
// and activity note the operation needs.
type Owner interface {
	// SignIn checks a password for the account with login (or, when login
	// is "", the account accountID) and starts a session, returning its
	// token.
	SignIn(ctx *fasthttp.RequestCtx, login, accountID, password string) (token string, err error)
	// CreateKey creates an API key of the owner's account.
	CreateKey(cred actors.Credential, capability actors.Level, name string) (CreatedKey, error)
	// ReplaceLogin sets the account's login after checking the current
	// password; keys are not affected.
	ReplaceLogin(ctx *fasthttp.RequestCtx, cred actors.Credential, login, current string) error
	// ReplacePassword changes the password, revoking every key, the owner
	// secret and every other session; it returns the new owner secret.
	ReplacePassword(ctx *fasthttp.RequestCtx, cred actors.Credential, current, next string) (secret string, err error)
	// ReplaceOwnerSecret rotates the owner secret, revoking every key.
	ReplaceOwnerSecret(ctx *fasthttp.RequestCtx, cred actors.Credential, current string) (secret string, err error)
	// RemoveAccount deletes the account after checking the password.
	RemoveAccount(ctx *fasthttp.RequestCtx, cred actors.Credential, current string) error
	// ServeLabels answers with the account's BIP-329 label file, as the
	// owner API's download does; an error is returned before anything is
	// written.
	ServeLabels(ctx *fasthttp.RequestCtx, cred actors.Credential) error
	// ImportLabels imports a BIP-329 label file and returns the report the
	// owner API answers with; with dryRun it saves nothing and reports
	// what an import would do now.
	ImportLabels(cred actors.Credential, file []byte, dryRun bool) (LabelImport, error)
	// ServeHistoryCSV answers with the History CSV of the account, or of
	// one card when cardID is not "", as the owner API's download does.
	ServeHistoryCSV(ctx *fasthttp.RequestCtx, cred actors.Credential, cardID string)
	// SearchHistory is a page of one card's History (q.Page) or of the
	// combined one, searched, filtered and sorted as q asks, with what a
	// row needs: notes, the chain tip and the owner's explorer.
	SearchHistory(ctx *fasthttp.RequestCtx, cred actors.Credential, q views.HistoryQuery) (views.HistoryResults, error)
	// SaveNote writes a transaction note as who, once the upstream has
	// confirmed the transaction (the note route's rules).
	SaveNote(ctx *fasthttp.RequestCtx, cred actors.Credential, who actors.Principal, txid, text string) error
	// CreateNotifyChannel makes a notification channel of kind (webhook,
	// ntfy or email) named name, told at where (a URL, or for email an
	// address), with the owner API's checks: the URL resolved and
	// refused as a send would refuse it, then sealed. A webhook's answer
	// holds its secret, to show once.
	CreateNotifyChannel(cred actors.Credential, kind, name, where string) (actors.ChannelCreatedView, error)
	// RotateNotifySecret gives a webhook channel a new secret and returns
	// it, to show once. The old one signs beside it for grace (0: it
	// signs nothing more), until previousUntil (RFC 3339).
	RotateNotifySecret(cred actors.Credential, channelID string, grace time.Duration) (secret string, previousUntil *string, err error)
	// TestNotifyChannel sends the channel a sample event now, outside the
	// outbox and the delivery log, and says how it went.
	TestNotifyChannel(cred actors.Credential, channelID string) (ChannelTest, error)
	// SendsEmail reports whether this server can send email (its
	// operator set an SMTP relay): without, email channels are refused.
	SendsEmail() bool
}

// LabelImport is a label import's report (the owner API's) as the site
// shows it.
type LabelImport struct {
	Records, Imported, Changed, Unchanged, Skipped int
	Lines                                          []LabelLine
}

// LabelLine is what became (or, in a dry run, would become) of one line.
type LabelLine struct {
	Line               int
	Type, Ref, Outcome string
	Reason             string
	Label, Space       string // the label and the Space the line gave
	Changes            bool   // it was (or would be) imported or changed
}

// ChannelTest is what a channel's test message gave.
type ChannelTest struct {
	Delivered bool   `json:"delivered"`
	Status    int    `json:"status"`
	LatencyMs int64  `json:"latency_ms"`
	Class     string `json:"class"`
	Detail    string `json:"detail"`
}

// Edge is the HTTP edge's rules the site follows: which scheme the client
// used, the owner-credential back-off, the session token's shape, and the
// one conversion of an error to what the client is told.
type Edge interface {
	// IsHTTPS reports whether the client reached the server over HTTPS.
	IsHTTPS(ctx *fasthttp.RequestCtx) bool
	// Session parses a session token; it reports false for anything that
	// is not one (an owner secret or an API key included).
	Session(token string) (actors.Credential, bool)
	// BackOff refuses (a RATE_LIMITED error with its wait) a client that
	// kept presenting bad credentials for account, or returns nil.
	BackOff(ctx *fasthttp.RequestCtx, account string) error
	// CredentialFailed counts a bad credential of the client for account
	// towards its back-off.
	CredentialFailed(ctx *fasthttp.RequestCtx, account string)
	// SpecError is the spec's {code, error} for err.
	SpecError(err error) *actors.Error
	// Status is the HTTP status of an error code.
	Status(code actors.Code) int
	// WriteError answers with the JSON error body of err.
	WriteError(ctx *fasthttp.RequestCtx, err error)
	// WriteJSON answers with body as JSON.
	WriteJSON(ctx *fasthttp.RequestCtx, status int, body any)
}
