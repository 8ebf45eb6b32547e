package site

import (
	"strconv"
	"strings"

	"github.com/addrwatch/addrwatch/actors"
)

// The first run: signing in lands on the Portfolio (landingPage), and
// while the account holds nothing to watch (no Account card, no bookmark
// card, no Sheet row; every account starts with one empty Space) the
// Portfolio lists the few steps that set it up, each a link to the page
// that does it. A step already done is ticked, with what the account has;
// the list goes once the account holds a card.

// startStep is one step of the getting-started list.
type startStep struct {
	ID     string // the list item's id, for tests and links
	Text   string // the link's words
	Link   string
	Detail string // what it is for, or, when Done, what the account has
	Done   bool
}

// startSteps reads what the list needs and returns it, or nil when the
// account holds cards (portfolioCards of them in the Portfolio).
func (s *Site) startSteps(r *pageReads, portfolioCards int) []startStep {
	if portfolioCards > 0 {
		return nil
	}
	sum := read(r, actors.AccountSummaryQuery{})
	spaces := read(r, actors.ListSpacesQuery{})
	channels := read(r, actors.NotifyChannelsQuery{})
	if r.err != nil || sum.BookmarkCards > 0 || sum.SheetRows > 0 {
		return nil
	}
	steps := []startStep{{ID: "start-card", Text: "Add an Account card", Link: "#card-address",
		Detail: "a Bitcoin address of yours to watch: its balance, its History and notifications when it moves."}}
	space := startStep{ID: "start-space", Text: "Make a Space", Link: "/spaces",
		Detail: "a place for bookmark cards of addresses you follow but do not own, or for a Sheet."}
	if n := len(spaces.Spaces); n > 0 {
		names := make([]string, 0, n)
		for _, sp := range spaces.Spaces {
			names = append(names, "“"+sp.Name+"”")
		}
		space.Done = true
		space.Detail = "you have " + counted(n, "Space", "Spaces") + " (" + strings.Join(names, ", ") + "): add bookmark cards to it, or make another if your plan allows."
	}
	key := startStep{ID: "start-key", Text: "Create an API key for an agent", Link: "/access#create-heading",
		Detail: "an agent reads (or, with a write key, changes) only the cards and Spaces you grant it."}
	if n := sum.Keys.Used; n > 0 {
		key.Done, key.Detail = true, "you have "+counted(n, "key", "keys")+"; grant it cards or Spaces on the same page."
	}
	channel := startStep{ID: "start-channel", Text: "Set up a notification channel", Link: "/notifications#add-channel-heading",
		Detail: "a webhook, an ntfy topic or an email, to be told when a watched address moves."}
	if n := len(channels.Channels); n > 0 {
		channel.Done, channel.Detail = true, "you have "+strconv.Itoa(n)+"."
	}
	return append(steps, space, key, channel)
}
