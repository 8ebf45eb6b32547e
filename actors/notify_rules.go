package actors

import (
	"slices"
)

// Notification rules: which chain events of a card reach which channels,
// and how deep a transaction must be for its tx_deep. One default rule
// for the account, at most one per card (an Account card or a bitcoin
// Space's card) and one per bitcoin Space. A card's effective rule is its
// own, else its Space's, else the default, else defaultNotifyRule: every
// kind, any amount, depth 6, every channel, so a new channel tells
// everything until the owner narrows it.

// RuleScope is what a rule is for.
type RuleScope string

const (
	RuleDefault RuleScope = "default"
	RuleCard    RuleScope = "card"
	RuleSpace   RuleScope = "space"
)

// Bounds of a rule.
const (
	NotifyDepthMin = 1
	NotifyDepthMax = 100
)

// ChainEventKinds are the six kinds, in the order rules list them.
var ChainEventKinds = []ChainEventKind{ChainTxSeen, ChainTxConfirmed, ChainTxDeep, ChainTxReplaced, ChainTxDropped, ChainTxReorged}

// NotifyRule is one rule. ID is the card's or the Space's (empty for the
// default).
type NotifyRule struct {
	Scope RuleScope `json:"scope"`
	ID    string    `json:"id,omitempty"`
	NotifyRuleFields
	UpdatedAt int64 `json:"updated_at"`
}

// NotifyRuleFields are what a rule says.
type NotifyRuleFields struct {
	// Events are the kinds told, in ChainEventKinds order; none mutes.
	Events []ChainEventKind `json:"events"`
	// MinAmountSat: an event is told when |amount| ≥ it (0: all).
	MinAmountSat int64 `json:"min_amount_sat"`
	// Depth is the N of tx_deep: tip height − block height + 1 ≥ N.
	Depth int64 `json:"depth"`
	// Channels are the channel IDs told; empty: every enabled channel.
	// A named channel deleted since selects nothing.
	Channels []string `json:"channels"`
}

// defaultNotifyRule is the rule of a card when the owner set none. It is
// shared: nothing may change the value it returns.
func defaultNotifyRule() NotifyRuleFields { return defaultRuleFields }

var defaultRuleFields = NotifyRuleFields{Events: ChainEventKinds, Depth: TxDeepConfirmations, Channels: []string{}}

// selects reports whether the rule tells e.
func (r *NotifyRuleFields) selects(e *ChainEvent) bool {
	amount := e.AmountSat
	if amount < 0 {
		amount = -amount
	}
	return slices.Contains(r.Events, e.Kind) && amount >= r.MinAmountSat
}

// sendsTo reports whether the rule tells the channel id.
func (r *NotifyRuleFields) sendsTo(id string) bool {
	return len(r.Channels) == 0 || slices.Contains(r.Channels, id)
}

// rule is the account's rule of scope and id, nil when it has none.
func (a *Account) rule(scope RuleScope, id string) *NotifyRule {
	if a.Notify == nil {
		return nil
	}
	for _, r := range a.Notify.Rules {
		if r.Scope == scope && r.ID == id {
			return r
		}
	}
	return nil
}

// effectiveRule is the rule that governs the card cardID (of the Space
// spaceID, empty for an Account card).
func (a *Account) effectiveRule(cardID, spaceID string) NotifyRuleFields {
	if a.Notify == nil || len(a.Notify.Rules) == 0 {
		return defaultNotifyRule()
	}
	if r := a.rule(RuleCard, cardID); r != nil {
		return r.NotifyRuleFields
	}
	if spaceID != "" {
		if r := a.rule(RuleSpace, spaceID); r != nil {
			return r.NotifyRuleFields
		}
	}
	if r := a.rule(RuleDefault, ""); r != nil {
		return r.NotifyRuleFields
	}
	return defaultNotifyRule()
}

// deepDepth is the depth at which the card's tx_deep is told. Without
// rules it is TxDeepConfirmations, as it was before rules existed.
func (a *Account) deepDepth(cardID, spaceID string) int64 {
	if a.Notify == nil || len(a.Notify.Rules) == 0 {
		return TxDeepConfirmations
	}
	return a.effectiveRule(cardID, spaceID).Depth
}

// PutNotifyRule sets the rule of a scope, whole: a field left out of the
// request is its default (the edge fills it in).
type PutNotifyRule struct {
	Scope RuleScope `json:"scope"`
	ID    string    `json:"id,omitempty"`
	NotifyRuleFields
}

func (*PutNotifyRule) Kind() Kind { return KindPutNotifyRule }

func (p *PutNotifyRule) apply(a *Account, c *Command, _ Level) Result {
	if err := requireOwnerOnly(c); err != nil {
		return fail(err)
	}
	if err := p.validate(a); err != nil {
		return fail(err)
	}
	a.forgetStaleRules()
	fields := p.NotifyRuleFields
	fields.Events = sortedKinds(fields.Events)
	fields.Channels = slices.Clone(fields.Channels)
	if r := a.rule(p.Scope, p.ID); r != nil {
		r.NotifyRuleFields, r.UpdatedAt = fields, c.At
		a.nextVersion()
		return ok(r.view())
	}
	r := &NotifyRule{Scope: p.Scope, ID: p.ID, NotifyRuleFields: fields, UpdatedAt: c.At}
	n := a.notify()
	n.Rules = append(n.Rules, r)
	a.nextVersion()
	return ok(r.view())
}

func (p *PutNotifyRule) validate(a *Account) *Error {
	if err := a.validateRuleScope(p.Scope, p.ID); err != nil {
		return err
	}
	return p.NotifyRuleFields.validate(a)
}

func (f *NotifyRuleFields) validate(a *Account) *Error {
	if f.Events == nil || f.Channels == nil {
		return Errorf(CodeValidation, "a rule lists its events and its channels (empty lists allowed)")
	}
	if len(f.Events) > len(ChainEventKinds) {
		return Errorf(CodeValidation, "events lists each kind at most once")
	}
	for i, k := range f.Events {
		if !slices.Contains(ChainEventKinds, k) {
			return Errorf(CodeValidation, "unknown event kind %q", string(k))
		}
		if slices.Contains(f.Events[:i], k) {
			return Errorf(CodeValidation, "events lists %s twice", k)
		}
	}
	if f.MinAmountSat < 0 || f.MinAmountSat > satoshisMax {
		return Errorf(CodeValidation, "min_amount_sat must be from 0 to %d", int64(satoshisMax))
	}
	if f.Depth < NotifyDepthMin || f.Depth > NotifyDepthMax {
		return Errorf(CodeValidation, "depth must be from %d to %d", NotifyDepthMin, NotifyDepthMax)
	}
	if len(f.Channels) > notifyChannelsMax {
		return Errorf(CodeValidation, "a rule names at most %d channels", notifyChannelsMax)
	}
	for i, id := range f.Channels {
		if a.notifyChannel(id) == nil {
			return Errorf(CodeValidation, "channels names %q, which is no channel of the account", truncateForMessage(id))
		}
		if slices.Contains(f.Channels[:i], id) {
			return Errorf(CodeValidation, "channels names a channel twice")
		}
	}
	return nil
}

// truncateForMessage keeps an echoed value short.
func truncateForMessage(s string) string {
	if len(s) > notifyChannelIDBytesMax || !isIDChars(s) {
		return "(a value that is no channel id)"
	}
	return s
}

// validateRuleScope checks that the rule's card or Space exists and may
// hold a rule: an Account card or a bitcoin Space's card; a bitcoin Space.
func (a *Account) validateRuleScope(scope RuleScope, id string) *Error {
	switch scope {
	case RuleDefault:
		if id != "" {
			return Errorf(CodeValidation, "the default rule has no id")
		}
	case RuleCard:
		if !a.notifiedCard(id) {
			return Errorf(CodeNotFound, "no Account card or bitcoin Space card with this id")
		}
	case RuleSpace:
		_, s := a.space(id)
		if s == nil {
			return Errorf(CodeNotFound, "no Space with this id")
		}
		if s.Type != SpaceBitcoin {
			return Errorf(CodeValidation, "only a bitcoin Space's cards have chain events")
		}
	default:
		return Errorf(CodeValidation, "scope must be default, card or space")
	}
	return nil
}

// notifiedCard reports whether id is an Account card or a bitcoin Space's
// card: the cards chain events are told of.
func (a *Account) notifiedCard(id string) bool {
	if id == "" {
		return false
	}
	if _, c := a.portfolioCard(id); c != nil {
		return true
	}
	return a.spaceCardOf(id) != nil
}

// spaceCardOf is the bitcoin Space's card id and its Space, nil when none.
func (a *Account) spaceCardOf(id string) *Space {
	for _, s := range a.Spaces {
		if s.Type != SpaceBitcoin {
			continue
		}
		for _, c := range s.Cards {
			if c.ID == id {
				return s
			}
		}
	}
	return nil
}

// forgetStaleRules drops the rules of cards and Spaces deleted (or moved
// away, or no longer bitcoin) since: they govern nothing, and keeping
// them would let rules outgrow the account's cards.
func (a *Account) forgetStaleRules() {
	if a.Notify == nil {
		return
	}
	a.Notify.Rules = slices.DeleteFunc(a.Notify.Rules, func(r *NotifyRule) bool { return a.staleRule(r) })
}

func (a *Account) staleRule(r *NotifyRule) bool {
	switch r.Scope {
	case RuleCard:
		return !a.notifiedCard(r.ID)
	case RuleSpace:
		_, s := a.space(r.ID)
		return s == nil || s.Type != SpaceBitcoin
	}
	return false
}

// sortedKinds is kinds in ChainEventKinds order.
func sortedKinds(kinds []ChainEventKind) []ChainEventKind {
	out := make([]ChainEventKind, 0, len(kinds))
	for _, k := range ChainEventKinds {
		if slices.Contains(kinds, k) {
			out = append(out, k)
		}
	}
	return out
}

// DeleteNotifyRule removes a rule: the card falls back to its Space's,
// then to the default; the default falls back to defaultNotifyRule.
type DeleteNotifyRule struct {
	Scope RuleScope `json:"scope"`
	ID    string    `json:"id,omitempty"`
}

func (*DeleteNotifyRule) Kind() Kind { return KindDeleteNotifyRule }

func (p *DeleteNotifyRule) apply(a *Account, c *Command, _ Level) Result {
	if err := requireOwnerOnly(c); err != nil {
		return fail(err)
	}
	if p.Scope != RuleDefault && p.Scope != RuleCard && p.Scope != RuleSpace {
		return fail(Errorf(CodeValidation, "scope must be default, card or space"))
	}
	r := a.rule(p.Scope, p.ID)
	if r == nil || a.staleRule(r) {
		return fail(Errorf(CodeNotFound, "no such rule"))
	}
	a.Notify.Rules = slices.DeleteFunc(a.Notify.Rules, func(x *NotifyRule) bool { return x == r })
	a.forgetStaleRules()
	a.nextVersion()
	return noContent()
}

// RuleView is a rule as the owner API shows it.
type RuleView struct {
	Scope        RuleScope        `json:"scope"`
	CardID       string           `json:"card_id,omitempty"`
	SpaceID      string           `json:"space_id,omitempty"`
	Events       []ChainEventKind `json:"events"`
	MinAmountSat int64            `json:"min_amount_sat"`
	Depth        int64            `json:"depth"`
	Channels     []string         `json:"channels"`
	// Set is false for the default rule when the owner set none: the
	// view shows what applies then.
	Set       bool    `json:"set"`
	UpdatedAt *string `json:"updated_at"`
}

func (r *NotifyRule) view() RuleView {
	v := ruleFieldsView(r.NotifyRuleFields)
	v.Scope, v.Set, v.UpdatedAt = r.Scope, true, optionalTime(r.UpdatedAt)
	switch r.Scope {
	case RuleCard:
		v.CardID = r.ID
	case RuleSpace:
		v.SpaceID = r.ID
	}
	return v
}

func ruleFieldsView(f NotifyRuleFields) RuleView {
	return RuleView{Events: slices.Clone(f.Events), MinAmountSat: f.MinAmountSat, Depth: f.Depth, Channels: slices.Clone(f.Channels)}
}

// NotifyRulesQuery is the owner's list of rules.
type NotifyRulesQuery struct{}

// NotifyRulesView is the body of GET /owner/v1/notifications/rules: the
// default rule (what applies when the owner set none, with set false),
// then the cards' and the Spaces' rules in the order they were set.
type NotifyRulesView struct {
	Default        RuleView   `json:"default"`
	Cards          []RuleView `json:"cards"`
	BookmarkSpaces []RuleView `json:"bookmark_spaces"`
}

func (NotifyRulesQuery) answer(a *Account, who Principal, _ Level, _ int64) (NotifyRulesView, *Error) {
	if err := ownerOnlyQuery(who); err != nil {
		return NotifyRulesView{}, err
	}
	v := NotifyRulesView{Cards: []RuleView{}, BookmarkSpaces: []RuleView{}}
	v.Default = ruleFieldsView(defaultNotifyRule())
	v.Default.Scope = RuleDefault
	if a.Notify == nil {
		return v, nil
	}
	for _, r := range a.Notify.Rules {
		if a.staleRule(r) {
			continue
		}
		switch r.Scope {
		case RuleDefault:
			v.Default = r.view()
		case RuleCard:
			v.Cards = append(v.Cards, r.view())
		case RuleSpace:
			v.BookmarkSpaces = append(v.BookmarkSpaces, r.view())
		}
	}
	return v, nil
}
