package actors

// Kind identifies a command type in the replicated log. The numbers are
// part of the on-disk format: never reuse or renumber one.
type Kind uint8

const (
	KindCreateAccount       Kind = 1
	KindDeleteAccount       Kind = 2
	KindCreateKey           Kind = 3
	KindRevokeKey           Kind = 4
	KindCreateSession       Kind = 5
	KindDeleteSession       Kind = 6
	KindSetGrant            Kind = 7
	KindSetPlan             Kind = 8
	KindChangePassword      Kind = 9
	KindRotateOwnerSecret   Kind = 10
	KindCreatePortfolioCard Kind = 11
	KindUpdatePortfolioCard Kind = 12
	KindDeletePortfolioCard Kind = 13
	KindCreateSpace         Kind = 14
	KindUpdateSpace         Kind = 15
	KindDeleteSpace         Kind = 16
	KindCreateBookmarkCard  Kind = 17
	KindUpdateBookmarkCard  Kind = 18
	KindDeleteBookmarkCard  Kind = 19
	KindMoveCard            Kind = 20
	KindPatchSheet          Kind = 21
	KindPutSheetRow         Kind = 22
	KindDeleteSheetRow      Kind = 23
	KindCompactSheet        Kind = 24
	KindPutNote             Kind = 25
	KindDeleteNote          Kind = 26
	KindSetLogin            Kind = 27
	KindTouchKey            Kind = 28
	KindTouchSession        Kind = 29
	KindRecordActivity      Kind = 30
	KindRecordKeyActivity   Kind = 31
	KindImportLabels        Kind = 32
)

// Command is one replicated change to one account. Everything apply needs
// from the outside world (time, new IDs, secret hashes) is carried here.
type Command struct {
	Account     string              `json:"a"`
	At          int64               `json:"t"` // the leader's clock, Unix nanoseconds
	Principal   Principal           `json:"p"`
	Idempotency *IdempotencyRequest `json:"i,omitempty"`
	Payload     Payload             `json:"-"` // encoded by package persistence
}

// Payload is the kind-specific body of a Command.
type Payload interface {
	Kind() Kind
	// apply runs the rule for this payload. capability is the acting
	// principal's, re-checked against the state being applied to. A rule
	// validates everything before it changes anything, so a failed command
	// leaves no partial change.
	apply(a *Account, c *Command, capability Level) Result
}

// NewPayload returns an empty payload of kind k for decoding, or false for a
// kind this build does not know or whose feature version it does not
// support (the caller must stop rather than skip it, unless the record is
// marked ignorable).
func NewPayload(k Kind) (Payload, bool) {
	if k.FeatureVersion() > SupportedFeatureVersion() {
		return nil, false
	}
	switch k {
	case KindCreateAccount:
		return &CreateAccount{}, true
	case KindDeleteAccount:
		return &DeleteAccount{}, true
	case KindCreateKey:
		return &CreateKey{}, true
	case KindRevokeKey:
		return &RevokeKey{}, true
	case KindCreateSession:
		return &CreateSession{}, true
	case KindDeleteSession:
		return &DeleteSession{}, true
	case KindSetGrant:
		return &SetGrant{}, true
	case KindSetPlan:
		return &SetPlan{}, true
	case KindChangePassword:
		return &ChangePassword{}, true
	case KindRotateOwnerSecret:
		return &RotateOwnerSecret{}, true
	case KindCreatePortfolioCard:
		return &CreatePortfolioCard{}, true
	case KindUpdatePortfolioCard:
		return &UpdatePortfolioCard{}, true
	case KindDeletePortfolioCard:
		return &DeletePortfolioCard{}, true
	case KindCreateSpace:
		return &CreateSpace{}, true
	case KindUpdateSpace:
		return &UpdateSpace{}, true
	case KindDeleteSpace:
		return &DeleteSpace{}, true
	case KindCreateBookmarkCard:
		return &CreateBookmarkCard{}, true
	case KindUpdateBookmarkCard:
		return &UpdateBookmarkCard{}, true
	case KindDeleteBookmarkCard:
		return &DeleteBookmarkCard{}, true
	case KindMoveCard:
		return &MoveCard{}, true
	case KindPatchSheet:
		return &PatchSheet{}, true
	case KindPutSheetRow:
		return &PutSheetRow{}, true
	case KindDeleteSheetRow:
		return &DeleteSheetRow{}, true
	case KindCompactSheet:
		return &CompactSheet{}, true
	case KindPutNote:
		return &PutNote{}, true
	case KindDeleteNote:
		return &DeleteNote{}, true
	case KindSetLogin:
		return &SetLogin{}, true
	case KindTouchKey:
		return &TouchKey{}, true
	case KindTouchSession:
		return &TouchSession{}, true
	case KindRecordActivity:
		return &RecordActivity{}, true
	case KindRecordKeyActivity:
		return &RecordKeyActivity{}, true
	case KindImportLabels:
		return &ImportLabels{}, true
	}
	return nil, false
}

// Result is the outcome of applying a command or running a query: a
// success status and a body for the edge to render as JSON, or a rule's
// refusal. Body may be a json.RawMessage (an idempotent replay).
//
// The refusal is unexported so that outside this package there is one
// error channel: the cluster hands a Result on through Outcome, and every
// caller above it sees a refusal as the error it returns (an *Error, found
// with errors.As), never as a field to check beside that error.
type Result struct {
	Status int
	Body   any
	err    *Error
}

// Outcome splits r into its success and its error: (r, nil) when the
// command or query succeeded, and (Result{}, the *Error) when a rule
// refused it.
func (r Result) Outcome() (Result, error) {
	if r.err != nil {
		return Result{}, r.err
	}
	return r, nil
}

func ok(body any) Result      { return Result{Status: 200, Body: body} }
func created(body any) Result { return Result{Status: 201, Body: body} }
func noContent() Result       { return Result{Status: 204} }
func fail(err *Error) Result  { return Result{err: err} }
