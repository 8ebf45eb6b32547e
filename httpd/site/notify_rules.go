package site

import (
	"slices"
	"strconv"
	"strings"

	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/actors"
)

// Notification rules: which chain events of a card reach which channels,
// from what amount, and how deep tx_deep is. A card follows its own rule,
// else its bitcoin Space's, else the default (actors/notify_rules.go). The
// forms read the amount in BTC and store satoshis; what the owner typed
// wrong is said beside its field, and nothing is saved.

// chainKindWords are the six kinds as the owner reads them: a short name
// for tables and a sentence for the rule form. N stands for the depth.
var chainKindWords = map[actors.ChainEventKind]struct{ Short, Long string }{
	actors.ChainTxSeen:      {"Seen", "Seen: a payment appears in the mempool, unconfirmed"},
	actors.ChainTxConfirmed: {"Confirmed", "Confirmed: it is in a block (again, after a reorg took it out)"},
	actors.ChainTxDeep:      {"Deep", "Deep: its block is N blocks deep (the depth below)"},
	actors.ChainTxReplaced:  {"Replaced", "Replaced: another transaction took its place in the mempool (RBF)"},
	actors.ChainTxDropped:   {"Dropped", "Dropped: it left the mempool unconfirmed, not replaced"},
	actors.ChainTxReorged:   {"Reorged", "Reorged: its block left the best chain, undoing the confirmation"},
}

// kindShort is a kind's short name (the kind itself when unknown).
func kindShort(k actors.ChainEventKind) string {
	if w, known := chainKindWords[k]; known {
		return w.Short
	}
	return string(k)
}

// ruleScopeWords says which rule governs a card.
var ruleScopeWords = map[actors.RuleScope]string{
	actors.RuleCard:    "its own rule",
	actors.RuleSpace:   "its Space's rule",
	actors.RuleDefault: "the default rule",
	"":                 "the default rule (built in)",
}

// rulesSummary is the rules part of the notification settings page.
type rulesSummary struct {
	Default ruleShown
	Spaces  []ruleTarget
	Cards   []ruleTarget
}

// ruleShown is a rule in words.
type ruleShown struct {
	Set      bool
	Events   string
	Min      string
	Depth    int64
	Channels string
}

// ruleTarget is a card or a bitcoin Space the rules list, with the rule
// that governs it.
type ruleTarget struct {
	ID, Name, Where, Follows, Link string
	Own                            bool
}

func showRule(v actors.RuleView, channels []actors.ChannelView) ruleShown {
	shown := ruleShown{Set: v.Set, Depth: v.Depth, Min: "any amount"}
	var kinds []string
	for _, k := range v.Events {
		kinds = append(kinds, kindShort(k))
	}
	shown.Events = strings.Join(kinds, ", ")
	if len(kinds) == 0 {
		shown.Events = "none (muted)"
	}
	if v.MinAmountSat > 0 {
		shown.Min = "at least " + formatBTC(v.MinAmountSat, false)
	}
	shown.Channels = "every enabled channel"
	if len(v.Channels) > 0 {
		var names []string
		for _, id := range v.Channels {
			name := "(a deleted channel)"
			for _, ch := range channels {
				if ch.ID == id {
					name = ch.Name
				}
			}
			names = append(names, name)
		}
		shown.Channels = strings.Join(names, ", ")
	}
	return shown
}

func summarizeRules(rules actors.NotifyRulesView, cards actors.NotifiedCardsView, channels []actors.ChannelView) rulesSummary {
	sum := rulesSummary{Default: showRule(rules.Default, channels)}
	for _, sp := range cards.Spaces {
		follows := ruleScopeWords[""]
		if rules.Default.Set {
			follows = ruleScopeWords[actors.RuleDefault]
		}
		if sp.HasRule {
			follows = "its own rule"
		}
		sum.Spaces = append(sum.Spaces, ruleTarget{ID: sp.ID, Name: sp.Name, Where: "bitcoin Space", Follows: follows, Own: sp.HasRule,
			Link: "/notifications/rules/spaces/" + sp.ID})
	}
	for _, c := range cards.Cards {
		where := "Portfolio"
		if c.SpaceID != "" {
			where = "Space " + c.SpaceName
		}
		sum.Cards = append(sum.Cards, ruleTarget{ID: c.ID, Name: c.Name, Where: where, Follows: ruleScopeWords[c.RuleFrom], Own: c.RuleFrom == actors.RuleCard,
			Link: "/notifications/rules/cards/" + c.ID})
	}
	return sum
}

// ruleForm is a rule as its form holds it: what the owner typed, kept
// when it is refused.
type ruleForm struct {
	Events   []string
	MinBTC   string
	Depth    string
	Channels []string
}

// ruleErrors are the form's refusals, by field.
type ruleErrors struct {
	Events, MinBTC, Depth, Channels string
}

func (e ruleErrors) any() bool { return e != ruleErrors{} }

// ruleKindBox is one event kind's checkbox.
type ruleKindBox struct {
	Kind, Words string
	Checked     bool
}

// ruleChannelBox is one channel's checkbox.
type ruleChannelBox struct {
	ID, Name, Kind string
	Checked, Off   bool
}

// ruleData is a rule's page.
type ruleData struct {
	Scope              string // default, card or space
	Action             string // the form's address
	Subject            string // what the rule is for, in words
	Link               string // the card's or the Space's page
	Own                bool   // the subject has a rule of its own (it may be removed)
	Follows            string // otherwise, which rule it follows now
	Form               ruleForm
	Errors             ruleErrors
	Kinds              []ruleKindBox
	Boxes              []ruleChannelBox
	DepthMin, DepthMax int64
}

func (s *Site) registerRules(r Router) {
	for _, scope := range []struct {
		path  string
		scope actors.RuleScope
		param string
	}{
		{"/notifications/rules/default", actors.RuleDefault, ""},
		{"/notifications/rules/cards/{card_id}", actors.RuleCard, "card_id"},
		{"/notifications/rules/spaces/{space_id}", actors.RuleSpace, "space_id"},
	} {
		r.GET(scope.path, s.signedIn(func(ctx *fasthttp.RequestCtx, sess *siteSession) {
			s.renderRule(ctx, sess, fasthttp.StatusOK, scope.scope, pathParam(ctx, scope.param), nil, ruleErrors{}, "")
		}))
		r.POST(scope.path, s.signedIn(s.saveRuleForm(scope.scope, scope.param)))
		r.POST(scope.path+"/delete", s.signedIn(func(ctx *fasthttp.RequestCtx, sess *siteSession) {
			id := pathParam(ctx, scope.param)
			if _, err := s.siteWrite(sess, &actors.DeleteNotifyRule{Scope: scope.scope, ID: id}); err != nil {
				s.renderRule(ctx, sess, s.edge.Status(err.Code), scope.scope, id, nil, ruleErrors{}, err.Message)
				return
			}
			s.redirect(ctx, "/notifications?m=rule-removed")
		}))
	}
}

// renderRule draws the rule of scope and id: the form holds what the
// owner typed when given, else the rule that governs the subject now.
func (s *Site) renderRule(ctx *fasthttp.RequestCtx, sess *siteSession, status int, scope actors.RuleScope, id string, typed *ruleForm, errs ruleErrors, problem string) {
	r := s.reads(sess)
	_, page := r.layout("notifications")
	rules := read(r, actors.NotifyRulesQuery{})
	cards := read(r, actors.NotifiedCardsQuery{})
	channels := read(r, actors.NotifyChannelsQuery{})
	if r.failed(ctx) {
		return
	}
	d := ruleData{Scope: string(scope), Errors: errs, DepthMin: actors.NotifyDepthMin, DepthMax: actors.NotifyDepthMax}
	governing := rules.Default
	switch scope {
	case actors.RuleDefault:
		d.Action, d.Subject, d.Own = "/notifications/rules/default", "every card without a rule of its own or of its Space", rules.Default.Set
		if !d.Own {
			d.Follows = "the built-in default: every event, any amount, depth 6, every channel"
		}
	case actors.RuleCard:
		i := slices.IndexFunc(cards.Cards, func(c actors.NotifiedCard) bool { return c.ID == id })
		if i < 0 {
			s.siteError(ctx, actors.Errorf(actors.CodeNotFound, "no Account card or bitcoin Space card with this id"))
			return
		}
		c := cards.Cards[i]
		d.Action, d.Own, d.Follows = "/notifications/rules/cards/"+id, c.RuleFrom == actors.RuleCard, ruleScopeWords[c.RuleFrom]
		d.Subject, d.Link = "the card "+cardLabel(c.Name)+" ("+c.Address+")", "/portfolio/cards/"+id
		if c.SpaceID != "" {
			d.Subject, d.Link = "the card "+cardLabel(c.Name)+" of the Space "+c.SpaceName+" ("+c.Address+")", "/spaces/"+c.SpaceID
			if j := slices.IndexFunc(rules.BookmarkSpaces, func(v actors.RuleView) bool { return v.SpaceID == c.SpaceID }); j >= 0 {
				governing = rules.BookmarkSpaces[j]
			}
		}
		if j := slices.IndexFunc(rules.Cards, func(v actors.RuleView) bool { return v.CardID == id }); j >= 0 {
			governing = rules.Cards[j]
		}
	case actors.RuleSpace:
		i := slices.IndexFunc(cards.Spaces, func(sp actors.NotifiedSpace) bool { return sp.ID == id })
		if i < 0 {
			s.siteError(ctx, actors.Errorf(actors.CodeNotFound, "no bitcoin Space with this id"))
			return
		}
		sp := cards.Spaces[i]
		d.Action, d.Own, d.Subject, d.Link = "/notifications/rules/spaces/"+id, sp.HasRule, "the cards of the bitcoin Space "+sp.Name+" that have no rule of their own", "/spaces/"+id
		d.Follows = "the default rule"
		if j := slices.IndexFunc(rules.BookmarkSpaces, func(v actors.RuleView) bool { return v.SpaceID == id }); j >= 0 {
			governing = rules.BookmarkSpaces[j]
		}
	}
	if typed != nil {
		d.Form = *typed
	} else {
		d.Form = ruleForm{MinBTC: minBTC(governing.MinAmountSat), Depth: strconv.FormatInt(governing.Depth, 10), Channels: governing.Channels}
		for _, k := range governing.Events {
			d.Form.Events = append(d.Form.Events, string(k))
		}
	}
	for _, k := range actors.ChainEventKinds {
		d.Kinds = append(d.Kinds, ruleKindBox{Kind: string(k), Words: chainKindWords[k].Long, Checked: slices.Contains(d.Form.Events, string(k))})
	}
	for _, ch := range channels.Channels {
		d.Boxes = append(d.Boxes, ruleChannelBox{ID: ch.ID, Name: ch.Name, Kind: channelKindWords[ch.Kind], Off: !ch.Enabled,
			Checked: slices.Contains(d.Form.Channels, ch.ID)})
	}
	page.Title, page.Problem, page.Data = "Notification rule", problem, d
	s.renderPage(ctx, status, "notify_rule", page)
}

// minBTC shows a minimum amount in the form: empty for none.
func minBTC(sat int64) string {
	if sat == 0 {
		return ""
	}
	return strings.TrimSuffix(formatBTC(sat, false), " BTC")
}

// saveRuleForm saves the rule a form sends, whole, or draws the form again
// with each refused field's reason.
func (s *Site) saveRuleForm(scope actors.RuleScope, param string) siteHandler {
	return func(ctx *fasthttp.RequestCtx, sess *siteSession) {
		id := pathParam(ctx, param)
		form, fields, errs := readRuleForm(ctx)
		if errs.any() {
			s.renderRule(ctx, sess, fasthttp.StatusUnprocessableEntity, scope, id, &form, errs, "The rule was not saved: see the fields marked below.")
			return
		}
		if _, err := s.siteWrite(sess, &actors.PutNotifyRule{Scope: scope, ID: id, NotifyRuleFields: fields}); err != nil {
			s.renderRule(ctx, sess, s.edge.Status(err.Code), scope, id, &form, ruleErrors{}, err.Message)
			return
		}
		s.redirect(ctx, "/notifications?m=rule-saved")
	}
}

// readRuleForm reads a rule's form into the command's fields, and says
// what is wrong with each field that cannot be read.
func readRuleForm(ctx *fasthttp.RequestCtx) (ruleForm, actors.NotifyRuleFields, ruleErrors) {
	args := ctx.PostArgs()
	var form ruleForm
	var errs ruleErrors
	fields := actors.NotifyRuleFields{Events: []actors.ChainEventKind{}, Channels: []string{}}
	for _, v := range args.PeekMulti("events") {
		k := actors.ChainEventKind(v)
		if !slices.Contains(actors.ChainEventKinds, k) || slices.Contains(fields.Events, k) {
			errs.Events = "Pick events from the list."
			continue
		}
		form.Events = append(form.Events, string(k))
		fields.Events = append(fields.Events, k)
	}
	for _, v := range args.PeekMulti("channels") {
		if slices.Contains(fields.Channels, string(v)) || len(fields.Channels) == notifyChannelsMax {
			errs.Channels = "Pick channels from the list."
			continue
		}
		form.Channels = append(form.Channels, string(v))
		fields.Channels = append(fields.Channels, string(v))
	}
	form.MinBTC = strings.TrimSpace(string(args.Peek("min_btc")))
	sat, err := parseBTC(form.MinBTC)
	if err != "" {
		errs.MinBTC = err
	}
	fields.MinAmountSat = sat
	form.Depth = strings.TrimSpace(string(args.Peek("depth")))
	depth, perr := strconv.ParseInt(form.Depth, 10, 64)
	if perr != nil || depth < actors.NotifyDepthMin || depth > actors.NotifyDepthMax {
		errs.Depth = "Type a whole number of blocks from " + strconv.Itoa(actors.NotifyDepthMin) + " to " + strconv.Itoa(actors.NotifyDepthMax) + "."
	}
	fields.Depth = depth
	return form, fields, errs
}

// btcSatoshisMax is 21 million BTC in satoshis: no amount is larger.
const btcSatoshisMax = 21_000_000 * 100_000_000

// parseBTC reads an amount typed in BTC ("0.001", "1", ".5", empty for
// none) as satoshis, or says what is wrong with it. Digits and one point
// only, at most eight decimals: nothing is rounded.
func parseBTC(typed string) (int64, string) {
	const wrong = "Type an amount in BTC, like 0.001, with at most 8 decimals (or leave it empty for any amount)."
	v := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(typed), "BTC"))
	if v == "" {
		return 0, ""
	}
	whole, frac, _ := strings.Cut(v, ".")
	if whole == "" && frac == "" || len(frac) > 8 || len(whole) > 8 || !allDigits(whole) || !allDigits(frac) {
		return 0, wrong
	}
	w, _ := strconv.ParseInt("0"+whole, 10, 64)
	f, _ := strconv.ParseInt((frac + "00000000")[:8], 10, 64)
	sat := w*100_000_000 + f
	if sat > btcSatoshisMax {
		return 0, "An amount is at most 21,000,000 BTC."
	}
	return sat, ""
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
