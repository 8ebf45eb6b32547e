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
	KindObserveAddress      Kind = 33
	KindObserveChain        Kind = 34
	KindCreateNotifyChannel Kind = 35
	KindUpdateNotifyChannel Kind = 36
	KindRotateNotifySecret  Kind = 37
	KindDeleteNotifyChannel Kind = 38
	KindPutNotifyRule       Kind = 39
	KindDeleteNotifyRule    Kind = 40
	KindRecordDeliveries    Kind = 41
	KindRedeliverEntry      Kind = 42
	// KindRotateNotifySecretWithGrace is 43: a rotation whose old secret
	// still signs for a while (feature version 7).
	KindRotateNotifySecretWithGrace Kind = 43
	// KindSetExplorer is 44: the block explorer the site links to
	// (feature version 8).
	KindSetExplorer Kind = 44
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
	spec, known := commandKinds[k]
	if !known || k.FeatureVersion() > SupportedFeatureVersion() {
		return nil, false
	}
	return spec.payload(), true
}

// commandKind is what the log needs to know of one kind of command.
type commandKind struct {
	// payload makes an empty payload to decode a record into.
	payload func() Payload
	// version is the feature version that introduced the kind (1 when
	// zero): a leader proposes it only once every voter applies it.
	version FeatureVersion
	// ignorable marks an advisory record that a node which does not know
	// the kind may skip (Kind.Ignorable).
	ignorable bool
}

// commandKinds is the one table of the log's command kinds, as Consul's
// FSM registers its commands: adding a command is its Kind number above,
// a row here, and its payload (the struct and its apply) beside the rules
// it follows. TestCommandKindsAreTheirPayloads checks each row against
// its payload's Kind.
var commandKinds = map[Kind]commandKind{
	KindCreateAccount:               {payload: func() Payload { return &CreateAccount{} }},
	KindDeleteAccount:               {payload: func() Payload { return &DeleteAccount{} }},
	KindCreateKey:                   {payload: func() Payload { return &CreateKey{} }},
	KindRevokeKey:                   {payload: func() Payload { return &RevokeKey{} }},
	KindCreateSession:               {payload: func() Payload { return &CreateSession{} }},
	KindDeleteSession:               {payload: func() Payload { return &DeleteSession{} }},
	KindSetGrant:                    {payload: func() Payload { return &SetGrant{} }},
	KindSetPlan:                     {payload: func() Payload { return &SetPlan{} }},
	KindChangePassword:              {payload: func() Payload { return &ChangePassword{} }},
	KindRotateOwnerSecret:           {payload: func() Payload { return &RotateOwnerSecret{} }},
	KindCreatePortfolioCard:         {payload: func() Payload { return &CreatePortfolioCard{} }},
	KindUpdatePortfolioCard:         {payload: func() Payload { return &UpdatePortfolioCard{} }},
	KindDeletePortfolioCard:         {payload: func() Payload { return &DeletePortfolioCard{} }},
	KindCreateSpace:                 {payload: func() Payload { return &CreateSpace{} }},
	KindUpdateSpace:                 {payload: func() Payload { return &UpdateSpace{} }},
	KindDeleteSpace:                 {payload: func() Payload { return &DeleteSpace{} }},
	KindCreateBookmarkCard:          {payload: func() Payload { return &CreateBookmarkCard{} }},
	KindUpdateBookmarkCard:          {payload: func() Payload { return &UpdateBookmarkCard{} }},
	KindDeleteBookmarkCard:          {payload: func() Payload { return &DeleteBookmarkCard{} }},
	KindMoveCard:                    {payload: func() Payload { return &MoveCard{} }},
	KindPatchSheet:                  {payload: func() Payload { return &PatchSheet{} }},
	KindPutSheetRow:                 {payload: func() Payload { return &PutSheetRow{} }},
	KindDeleteSheetRow:              {payload: func() Payload { return &DeleteSheetRow{} }},
	KindCompactSheet:                {payload: func() Payload { return &CompactSheet{} }},
	KindPutNote:                     {payload: func() Payload { return &PutNote{} }},
	KindDeleteNote:                  {payload: func() Payload { return &DeleteNote{} }},
	KindSetLogin:                    {payload: func() Payload { return &SetLogin{} }},
	KindTouchKey:                    {payload: func() Payload { return &TouchKey{} }},
	KindTouchSession:                {payload: func() Payload { return &TouchSession{} }},
	KindRecordActivity:              {payload: func() Payload { return &RecordActivity{} }, version: 2, ignorable: true},
	KindRecordKeyActivity:           {payload: func() Payload { return &RecordKeyActivity{} }, version: 3, ignorable: true},
	KindImportLabels:                {payload: func() Payload { return &ImportLabels{} }, version: 3},
	KindObserveAddress:              {payload: func() Payload { return &ObserveAddress{} }, version: 4},
	KindObserveChain:                {payload: func() Payload { return &ObserveChain{} }, version: 5},
	KindCreateNotifyChannel:         {payload: func() Payload { return &CreateNotifyChannel{} }, version: 6},
	KindUpdateNotifyChannel:         {payload: func() Payload { return &UpdateNotifyChannel{} }, version: 6},
	KindRotateNotifySecret:          {payload: func() Payload { return &RotateNotifySecret{} }, version: 6},
	KindDeleteNotifyChannel:         {payload: func() Payload { return &DeleteNotifyChannel{} }, version: 6},
	KindPutNotifyRule:               {payload: func() Payload { return &PutNotifyRule{} }, version: 6},
	KindDeleteNotifyRule:            {payload: func() Payload { return &DeleteNotifyRule{} }, version: 6},
	KindRecordDeliveries:            {payload: func() Payload { return &RecordDeliveries{} }, version: 6},
	KindRedeliverEntry:              {payload: func() Payload { return &RedeliverEntry{} }, version: 6},
	KindRotateNotifySecretWithGrace: {payload: func() Payload { return &RotateNotifySecretWithGrace{} }, version: 7},
	KindSetExplorer:                 {payload: func() Payload { return &SetExplorer{} }, version: 8},
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

// Refused is the Result of a refusal, for the runtime that answers for an
// account without reaching a rule (package actors/registry: no such
// account, no answer in time). Like a rule's refusal it is read outside
// this package only through Outcome.
func Refused(err *Error) Result { return fail(err) }

func ok(body any) Result      { return Result{Status: 200, Body: body} }
func created(body any) Result { return Result{Status: 201, Body: body} }
func noContent() Result       { return Result{Status: 204} }
func fail(err *Error) Result  { return Result{err: err} }
