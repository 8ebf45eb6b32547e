package site

import (
	"strconv"

	"github.com/addrwatch/addrwatch/actors"
)

// A limit the account has reached replaces the create form it would
// refuse: the page says the limit, what the account holds, and the way to
// raise it (a larger plan, which the owner changes in Account settings:
// PUT /owner/v1/plan, the settings page's Plan form), or, when no plan
// allows more, what to remove instead. A create that still meets the
// limit (another tab or an agent got there first) answers the page with
// the same words, never the bare refusal.

// limitShown is the sentence a full create form is replaced with.
type limitShown struct {
	ID   string // the element's id on its page
	Text string // the limit and what the account holds
	Way  string // how to get room: a larger plan, or what to remove
	// Link and LinkText lead to where the limit is raised ("" when no
	// plan raises it).
	Link, LinkText string
}

// String is the limit as one line, for a refusal's problem line.
func (l limitShown) String() string {
	return l.Text + " " + l.Way
}

// settingsPlanLink is where the owner changes the plan.
const settingsPlanLink = "/settings#plan-heading"

// counted is "1 Space" or "10 Spaces".
func counted(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// largerPlan is the smallest plan that allows more than the account's
// plan, by allows, or false when none does.
func largerPlan(plan actors.Plan, allows func(actors.PlanAllows) int) (actors.Plan, bool) {
	have := allows(plan.Allows())
	for _, p := range actors.Plans() {
		if allows(p.Allows()) > have {
			return p, true
		}
	}
	return plan, false
}

// planLimit is the words of a limit set by the plan: text ("Your plan
// (base) allows 1 Space; you have 1."), then the smallest plan that allows
// more (in what's words: "10 Spaces"), or removeWay when none does.
func planLimit(plan actors.Plan, text string, allows func(actors.PlanAllows) int, what func(int) string, removeWay string) limitShown {
	l := limitShown{Text: text}
	if bigger, found := largerPlan(plan, allows); found {
		l.Way = "The " + bigger.String() + " plan allows " + what(allows(bigger.Allows())) + ": change the plan in Account settings, or " + removeWay
		l.Link, l.LinkText = settingsPlanLink, "Change the plan in Account settings"
		return l
	}
	l.Way = "No plan allows more: " + removeWay
	return l
}

// spacesLimit is the limit of Spaces; hidden Spaces count, as they do in
// the rule.
func spacesLimit(plan actors.Plan, used int) limitShown {
	spaces := func(n int) string { return counted(n, "Space", "Spaces") }
	allows := func(a actors.PlanAllows) int { return a.Spaces }
	return planLimit(plan, "Your plan ("+plan.String()+") allows "+spaces(allows(plan.Allows()))+"; you have "+strconv.Itoa(used)+".",
		allows, spaces, "delete a Space you no longer need to make another.")
}

// portfolioLimit is the limit of Account cards.
func portfolioLimit(plan actors.Plan, used int) limitShown {
	cards := func(n int) string { return counted(n, "Account card", "Account cards") }
	allows := func(a actors.PlanAllows) int { return a.PortfolioCards }
	return planLimit(plan, "Your plan ("+plan.String()+") allows "+cards(allows(plan.Allows()))+"; you have "+strconv.Itoa(used)+".",
		allows, cards, "delete an Account card, or move one into a Bitcoin Space, to add another.")
}

// spaceCardsLimit is the limit of bookmark cards in one Space.
func spaceCardsLimit(plan actors.Plan, used int) limitShown {
	cards := func(n int) string { return counted(n, "card", "cards") + " in a Space" }
	allows := func(a actors.PlanAllows) int { return a.SpaceCards }
	return planLimit(plan, "Your plan ("+plan.String()+") allows "+cards(allows(plan.Allows()))+"; this one holds "+strconv.Itoa(used)+".",
		allows, cards, "delete a card of this Space or move one out, or add the card to another Space.")
}

// keysLimit is the limit of live API keys, the same on every plan.
func keysLimit(used int) limitShown {
	return limitShown{Text: "An account holds at most " + counted(actors.KeysMax, "API key", "API keys") + ", on every plan; you have " + strconv.Itoa(used) + ".",
		Way: "No plan allows more: revoke a key no agent uses any more to create another."}
}

// channelsLimit is the limit of notification channels, the same on every
// plan.
func channelsLimit(used int) limitShown {
	return limitShown{Text: "An account holds at most " + counted(actors.NotifyChannelsMax, "notification channel", "notification channels") + ", on every plan; you have " + strconv.Itoa(used) + ".",
		Way: "No plan allows more: delete a channel to add another."}
}
