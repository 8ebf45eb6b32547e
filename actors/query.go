package actors

// Query is a read of one account's applied state. Queries never go through
// the log: the actor authenticates the credential and runs the query
// between commands, so a query sees every command applied before it.
type Query interface {
	run(a *Account, who Principal, capability Level, now int64) Result
}

// QueryOf is a query whose answer is a T: the edge reads its result as a T
// known at compile time, never through a type assertion of its own.
// Every query answers through its typed answer method; run (query_doors.go)
// is the untyped door the actor calls.
type QueryOf[T any] interface {
	Query
	answer(a *Account, who Principal, capability Level, now int64) (T, *Error)
}

// Answer is a Result's body as a T, the type its query declares (or the
// view a command answers with), or err when the store failed or a rule
// refused. Call it as Answer[T](store.Query(...)). A body of another type
// is a programmer error, answered as an internal error rather than a
// panic.
func Answer[T any](res Result, err error) (T, error) {
	v, isT := res.Body.(T)
	switch {
	case err != nil:
		var none T
		return none, err
	case !isT:
		return v, Errorf(CodeInternal, "internal error")
	}
	return v, nil
}

// answered is the Result of a typed answer.
func answered[T any](v T, err *Error) Result {
	if err != nil {
		return fail(err)
	}
	return ok(v)
}

// AuthQuery only authenticates: the edge uses it before proposing a
// command, so a bad or read-only key never reaches the log.
type AuthQuery struct{}

// AuthView is what AuthQuery returns.
type AuthView struct {
	Principal  Principal
	Capability Level
}

func (AuthQuery) answer(_ *Account, who Principal, capability Level, _ int64) (AuthView, *Error) {
	return AuthView{Principal: who, Capability: capability}, nil
}

// PasswordHashQuery returns the stored password hash, for the edge to
// verify a password with a slow hash outside the actor. Owner and system only.
type PasswordHashQuery struct{}

func (PasswordHashQuery) answer(a *Account, who Principal, _ Level, _ int64) (string, *Error) {
	if who.isAgent() {
		return "", Errorf(CodeForbidden, "API keys cannot manage the account")
	}
	return a.PasswordHash, nil
}

// MeQuery is GET /me.
type MeQuery struct{}

// MeView is the body of GET /me. The used counts include resources the key
// cannot see; only their number is revealed.
type MeView struct {
	AccountID          string     `json:"account_id"`
	KeyID              string     `json:"key_id,omitempty"`
	Capability         Level      `json:"capability"`
	Plan               Plan       `json:"plan"`
	AccessibleCardIDs  []string   `json:"accessible_card_ids"`
	AccessibleSpaceIDs []string   `json:"accessible_space_ids"`
	PortfolioCards     UsageView  `json:"portfolio_cards"`
	BookmarkSpaces     UsageView  `json:"bookmark_spaces"`
	RateLimit          RateLimits `json:"rate_limit"`
}

// UsageView is a used/limit pair.
type UsageView struct {
	Used  int `json:"used"`
	Limit int `json:"limit"`
}

// RateLimits is always {"remaining": null}: the 429 answer and Retry-After
// are authoritative.
type RateLimits struct {
	Remaining *int `json:"remaining"`
}

func (MeQuery) answer(a *Account, who Principal, capability Level, _ int64) (MeView, *Error) {
	limits := a.Plan.limits()
	me := MeView{
		AccountID:          a.ID,
		KeyID:              who.KeyID,
		Capability:         capability,
		Plan:               a.Plan,
		AccessibleCardIDs:  make([]string, 0, len(a.Portfolio)),
		AccessibleSpaceIDs: make([]string, 0, len(a.Spaces)),
		PortfolioCards:     UsageView{Used: len(a.Portfolio), Limit: limits.portfolioCardsMax},
		BookmarkSpaces:     UsageView{Used: len(a.Spaces), Limit: limits.spacesMax},
	}
	for _, c := range a.Portfolio {
		if a.portfolioAccess(c, who, capability) >= LevelRead {
			me.AccessibleCardIDs = append(me.AccessibleCardIDs, c.ID)
		}
	}
	for i, s := range a.Spaces {
		if a.spaceAccess(i, who, capability) >= LevelRead {
			me.AccessibleSpaceIDs = append(me.AccessibleSpaceIDs, s.ID)
		}
	}
	return me, nil
}

// ListPortfolioQuery is GET /portfolio/cards.
type ListPortfolioQuery struct{}

// PortfolioListView is the body of GET /portfolio/cards.
type PortfolioListView struct {
	Cards           []CardView `json:"cards"`
	Scope           string     `json:"scope"`
	IncludedCardIDs []string   `json:"included_card_ids"`
}

func (ListPortfolioQuery) answer(a *Account, who Principal, capability Level, _ int64) (PortfolioListView, *Error) {
	v := PortfolioListView{Cards: make([]CardView, 0, len(a.Portfolio)), Scope: "accessible_portfolio", IncludedCardIDs: make([]string, 0, len(a.Portfolio))}
	for _, c := range a.Portfolio {
		if a.portfolioAccess(c, who, capability) >= LevelRead {
			v.Cards = append(v.Cards, a.cardView(c, who, capability))
			v.IncludedCardIDs = append(v.IncludedCardIDs, c.ID)
		}
	}
	return v, nil
}

// GetPortfolioCardQuery is GET /portfolio/cards/{card_id}.
type GetPortfolioCardQuery struct{ CardID string }

func (q GetPortfolioCardQuery) answer(a *Account, who Principal, capability Level, _ int64) (CardEnvelope, *Error) {
	_, card := a.portfolioCard(q.CardID)
	if card == nil || a.portfolioAccess(card, who, capability) < LevelRead {
		return CardEnvelope{}, errCardNotFound
	}
	return CardEnvelope{Card: a.cardView(card, who, capability)}, nil
}

// ValidateCreatePortfolioCardQuery is POST /portfolio/cards/validate: every
// rule of the create, nothing created, no capacity used.
type ValidateCreatePortfolioCardQuery struct{ Card CreatePortfolioCard }

// ValidView is the body of a passing validation.
type ValidView struct {
	Valid bool `json:"valid"`
}

func (q ValidateCreatePortfolioCardQuery) answer(a *Account, who Principal, capability Level, _ int64) (ValidView, *Error) {
	if _, err := q.Card.check(a, who, capability); err != nil {
		return ValidView{}, err
	}
	return ValidView{Valid: true}, nil
}

// ListKeysQuery is the owner's GET /owner/v1/keys.
type ListKeysQuery struct{}

// KeyListView is the body of GET /owner/v1/keys.
type KeyListView struct {
	Keys []KeyView `json:"keys"`
}

func (ListKeysQuery) answer(a *Account, who Principal, _ Level, _ int64) (KeyListView, *Error) {
	if who.isAgent() {
		return KeyListView{}, Errorf(CodeForbidden, "API keys cannot manage keys")
	}
	v := KeyListView{Keys: make([]KeyView, 0, len(a.Keys))}
	for _, k := range a.Keys {
		v.Keys = append(v.Keys, keyView(k))
	}
	return v, nil
}

// RunQuery authenticates cred against a and runs q: the whole read path of
// an account, used by the actor (through SafeQuery) and directly by tests.
func RunQuery(a *Account, cred Credential, q Query) Result {
	return runQuery(a, cred, q, nil)
}

// runQuery is RunQuery answering a RenderedQuery from kept, when given,
// once the credential is authenticated (rendered.go).
func runQuery(a *Account, cred Credential, q Query, kept *RenderCache) Result {
	if a == nil {
		return fail(errUnauthorized)
	}
	who, capability, err := a.Authenticate(cred)
	if err != nil {
		return fail(err)
	}
	if r, rendered := q.(RenderedQuery); rendered && kept != nil {
		return kept.answer(a, cred, who, capability, r)
	}
	return q.run(a, who, capability, cred.Now)
}

// SafeQuery is RunQuery with a panic recovered and answered as an internal
// error, as SafeApply is for commands: a read never costs the actor its
// state. recovered is the panic's value, nil when there was none, for the
// caller to report. The actor passes its RenderCache as kept (nil: keep
// nothing).
func SafeQuery(a *Account, cred Credential, q Query, kept *RenderCache) (res Result, recovered any) {
	defer func() {
		if r := recover(); r != nil {
			res, recovered = fail(Errorf(CodeInternal, "internal error")), r
		}
	}()
	return runQuery(a, cred, q, kept), nil
}
