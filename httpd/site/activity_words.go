package site

import (
	"strconv"
	"strings"

	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/actors"
)

// Agent activity in the owner's words: each line of the log (a method and
// route, the resource its path named, the outcome) said as the owner
// would say it, "changed card “Bob” in Space “Friends”", with the names
// the owner sees now.
//
// The log keeps which card, Space or transaction a request was about and
// how it was answered, never the request's body: so a change is said with
// the name the card has now ("changed card “Bob”"), never as a rename
// from an old name the log does not hold, and a card or Space that is
// gone is "a card since deleted or moved", never an error.

// activityPhrase is what one route did: the verb in the past ("changed")
// and as an attempt ("change", after "was refused:"), and its object, in
// which {card}, {space} and {tx} stand for the resource's words.
type activityPhrase struct {
	did, try, object string
}

// activityPhrases are the words of every route the Agent API serves (a
// test in httpd checks the list against the router), by the Op the log
// keeps.
var activityPhrases = map[string]activityPhrase{
	"GET /v1/me": {"read", "read", "its own access"},

	"GET /v1/portfolio/cards":                               {"listed", "list", "the Account cards"},
	"POST /v1/portfolio/cards":                              {"added", "add", "an Account card"},
	"POST /v1/portfolio/cards/validate":                     {"checked", "check", "an Account card before adding it"},
	"GET /v1/portfolio/cards/{card_id}":                     {"read", "read", "{card}"},
	"PATCH /v1/portfolio/cards/{card_id}":                   {"changed", "change", "{card}"},
	"DELETE /v1/portfolio/cards/{card_id}":                  {"deleted", "delete", "{card}"},
	"GET /v1/bookmark-spaces":                               {"listed", "list", "the Spaces"},
	"POST /v1/bookmark-spaces":                              {"made", "make", "a Space"},
	"GET /v1/bookmark-spaces/{space_id}":                    {"read", "read", "{space}"},
	"PATCH /v1/bookmark-spaces/{space_id}":                  {"changed", "change", "{space}"},
	"DELETE /v1/bookmark-spaces/{space_id}":                 {"deleted", "delete", "{space}"},
	"GET /v1/bookmark-spaces/{space_id}/cards":              {"listed", "list", "the cards of {space}"},
	"POST /v1/bookmark-spaces/{space_id}/cards":             {"added", "add", "a card to {space}"},
	"POST /v1/bookmark-spaces/{space_id}/cards/validate":    {"checked", "check", "a card before adding it to {space}"},
	"GET /v1/bookmark-spaces/{space_id}/cards/{card_id}":    {"read", "read", "{card} in {space}"},
	"PATCH /v1/bookmark-spaces/{space_id}/cards/{card_id}":  {"changed", "change", "{card} in {space}"},
	"DELETE /v1/bookmark-spaces/{space_id}/cards/{card_id}": {"deleted", "delete", "{card} from {space}"},
	"GET /v1/bookmark-spaces/{space_id}/sheet":              {"read", "read", "the Sheet of {space}"},
	"PATCH /v1/bookmark-spaces/{space_id}/sheet":            {"changed", "change", "cells of the Sheet of {space}"},
	"PUT /v1/bookmark-spaces/{space_id}/sheet":              {"added", "add", "a row to the Sheet of {space}"},
	"DELETE /v1/bookmark-spaces/{space_id}/sheet":           {"deleted", "delete", "a row of the Sheet of {space}"},
	"POST /v1/bookmark-spaces/{space_id}/sheet":             {"compacted", "compact", "the Sheet of {space}"},
	"POST /v1/cards/move":                                   {"moved", "move", "a card"},
	"POST /v1/cards/move/validate":                          {"checked", "check", "a move of a card"},

	"GET /v1/history":                              {"read", "read", "the combined History"},
	"GET /v1/history/cards":                        {"listed", "list", "the cards with a History"},
	"GET /v1/history/cards/{card_id}/transactions": {"read", "read", "the History of {card}"},
	"POST /v1/history/notes/batch":                 {"read", "read", "notes of transactions"},
	"PUT /v1/history/notes/{txid}":                 {"saved", "save", "a note on {tx}"},
	"DELETE /v1/history/notes/{txid}":              {"deleted", "delete", "the note on {tx}"},
	"GET /v1/history/activity":                     {"read", "read", "the chain activity of its cards"},
	"GET /v1/events":                               {"read", "read", "the change feed"},
}

// The log's own lines, which are no route.
var activityLinePhrases = map[string]activityPhrase{
	actors.ActivityUnknown:      {"asked for", "ask for", "cards, Spaces or notes that do not exist"},
	actors.ActivityOther:        {"made", "make", "other requests, counted together"},
	actors.ActivityOtherChanges: {"made", "make", "other changes, counted together"},
}

// ActivityOpHasWords reports whether the activity page has words for op
// (a method and route as the log keeps them), for httpd's check that
// every Agent API route has.
func ActivityOpHasWords(op string) bool {
	_, known := activityPhrases[op]
	return known
}

// activityNames are the names the owner sees now, by ID: Account cards,
// bookmark cards and Spaces.
type activityNames struct {
	accountCards  map[string]string // card ID → name
	bookmarkCards map[string]string
	spaces        map[string]string
}

// quoted is a name as the words show it: “Alice”, or (no name). The name
// is isolated (U+2068 FIRST STRONG ISOLATE … U+2069 POP DIRECTIONAL
// ISOLATE, the plain-text <bdi>), so a right-to-left name reads whole and
// leaves the sentence around it in its order.
func quoted(name string) string {
	if name == "" {
		return "(no name)"
	}
	return "“\u2068" + name + "\u2069”"
}

// cardWords are a card's words: Account card “Alice”, card “Bob”, or a
// card since deleted or moved (a move gives the card a new ID).
// A card the request deleted is "a card": its name went with it.
func (n activityNames) cardWords(ref actors.ResourceRef, deleted bool) string {
	if name, known := n.accountCards[ref.ID]; known {
		return "Account card " + quoted(name)
	}
	if name, known := n.bookmarkCards[ref.ID]; known {
		return "card " + quoted(name)
	}
	if deleted {
		return "a card"
	}
	return "a card since deleted or moved"
}

func (n activityNames) spaceWords(id string, deleted bool) string {
	if name, known := n.spaces[id]; known {
		return "Space " + quoted(name)
	}
	if deleted {
		return "a Space"
	}
	return "a Space since deleted"
}

// txWords names a transaction by the start and end of its ID, which is
// all a person compares.
func txWords(txid string) string {
	if len(txid) > 16 {
		txid = txid[:8] + "…" + txid[len(txid)-8:]
	}
	return "transaction " + txid
}

// activityWords are an entry's words, without the key's name, which the
// page shows beside them: "changed card “Bob” in Space “Friends”", or
// "was refused: change card “Bob” … (403 FORBIDDEN)". A route without
// words (a newer server's, in a log kept across an upgrade) is said as
// its method and route.
func activityWords(e actors.ActivityEntry, names activityNames) string {
	p, known := activityPhrases[e.Op]
	if !known {
		p, known = activityLinePhrases[e.Op]
	}
	if !known {
		p = activityPhrase{did: "asked", try: "ask", object: e.Op}
	}
	// What a delete the API made removed is gone by its nature, and
	// only that: its Space, when the card is gone, is named as usual.
	deleted := strings.HasPrefix(e.Op, "DELETE ") && actors.ActivityIsChange(e.Op, e.Status)
	r := strings.NewReplacer(
		"{card}", names.cardWords(e.Resource, deleted),
		"{space}", names.spaceWords(activitySpaceOf(e.Resource), deleted && e.Resource.Kind == actors.ResourceSpace),
		"{tx}", txWords(e.Resource.ID))
	object := r.Replace(p.object)
	switch {
	case e.Op == actors.ActivityOther || e.Op == actors.ActivityOtherChanges:
		return p.did + " " + object
	case e.Op == actors.ActivityUnknown:
		return p.did + " " + object + " (" + activityOutcome(e) + ")"
	case e.Status >= 400:
		return "was refused: " + p.try + " " + object + " (" + activityOutcome(e) + ")"
	}
	return p.did + " " + object
}

// activitySpaceOf is the Space a resource is in, or is.
func activitySpaceOf(ref actors.ResourceRef) string {
	if ref.Kind == actors.ResourceSpace {
		return ref.ID
	}
	return ref.SpaceID
}

// activityOutcome is an entry's status as the details line shows it:
// "200 OK", "403 FORBIDDEN".
func activityOutcome(e actors.ActivityEntry) string {
	switch {
	case e.Op == actors.ActivityOther, e.Op == actors.ActivityOtherChanges:
		return "several outcomes"
	case e.Code != "":
		return strconv.Itoa(e.Status) + " " + string(e.Code)
	}
	return strconv.Itoa(e.Status) + " " + fasthttp.StatusMessage(e.Status)
}
