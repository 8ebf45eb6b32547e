package actors

import (
	"fmt"
)

// Plan is an account's plan. Its limits live in planLimits, the one place
// that says what each plan allows.
type Plan uint8

const (
	PlanBase Plan = iota
	PlanExtended
)

type planLimit struct {
	name              string
	spacesMax         int // Spaces that are accessible and that may exist
	spaceCardsMax     int // bookmark cards per Space
	portfolioCardsMax int // Account cards; the spec ties it to the plan's card limit
}

var planLimits = [...]planLimit{
	PlanBase:     {name: "base", spacesMax: 1, spaceCardsMax: 10, portfolioCardsMax: 10},
	PlanExtended: {name: "extended", spacesMax: 10, spaceCardsMax: 10, portfolioCardsMax: 10},
}

func (p Plan) limits() planLimit { return planLimits[p] }

// PlanAllows is what a plan allows, for the owner's pages that say a
// limit and which plan would raise it.
type PlanAllows struct {
	Spaces         int // Spaces that may exist
	SpaceCards     int // bookmark cards per Space
	PortfolioCards int // Account cards
}

// Allows returns what p allows.
func (p Plan) Allows() PlanAllows {
	l := p.limits()
	return PlanAllows{Spaces: l.spacesMax, SpaceCards: l.spaceCardsMax, PortfolioCards: l.portfolioCardsMax}
}

// Plans are every plan, smallest first.
func Plans() []Plan {
	out := make([]Plan, len(planLimits))
	for i := range planLimits {
		out[i] = Plan(i)
	}
	return out
}

func (p Plan) String() string {
	if int(p) < len(planLimits) {
		return planLimits[p].name
	}
	return fmt.Sprintf("plan(%d)", p)
}

// ParsePlan parses "base" or "extended".
func ParsePlan(s string) (Plan, bool) {
	for i, l := range planLimits {
		if l.name == s {
			return Plan(i), true
		}
	}
	return PlanBase, false
}

// MarshalJSON refuses an unknown plan, so that nothing the decoder would
// reject can reach the log.
func (p Plan) MarshalJSON() ([]byte, error) { return appendPlan(nil, p) }

func (p *Plan) UnmarshalJSON(b []byte) error {
	s, err := jsonString(b)
	if err != nil {
		return err
	}
	v, ok := ParsePlan(s)
	if !ok {
		return fmt.Errorf("unknown plan %q", s)
	}
	*p = v
	return nil
}
