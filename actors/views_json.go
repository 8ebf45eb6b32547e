package actors

import (
	"encoding/json"
	"fmt"
	"strconv"
)

// The views every agent session reads most (GET /me, the Account card
// list, a single card) are written by hand-rolled appenders instead of
// encoding/json's reflection, which was a fifth of the server's CPU under
// the auth-reads bench (see bench/README.md). Each appender produces
// exactly the bytes json.Marshal would: views_json_test.go checks that
// against random values, so a field added to a view without its appender
// fails the tests rather than disappearing from the API.

// JSONAppender is a view that can append its own JSON encoding. The
// error is the one json.Marshal would return (a level or plan out of
// range); b is then unusable.
type JSONAppender interface {
	AppendJSON(b []byte) ([]byte, error)
}

// appendString appends s as encoding/json would. Names, IDs, addresses
// and most user text are plain ASCII that needs no escaping; anything
// else (quotes, control characters, the HTML-sensitive <, > and &,
// non-ASCII) goes through encoding/json itself, so the escaping rules
// live in one place.
func appendString(b []byte, s string) []byte {
	if !plainJSON(s) {
		enc, _ := json.Marshal(s) // a string always encodes
		return append(b, enc...)
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// plainJSON reports whether s is a JSON string's content exactly as
// encoding/json writes it: no byte escaped or replaced.
func plainJSON[T string | []byte](s T) bool {
	for i := 0; i < len(s); i++ {
		if !plainJSONByte[s[i]] {
			return false
		}
	}
	return true
}

// plainJSONByte marks the bytes encoding/json copies as they are.
var plainJSONByte = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

func appendStrings(b []byte, ss []string) []byte {
	if ss == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, s)
	}
	return append(b, ']')
}

// appendLevel appends a level's name; a level outside the three is an
// error, as it is for Level.MarshalJSON.
func appendLevel(b []byte, l Level) ([]byte, error) {
	if int(l) >= len(levelNames) {
		return b, fmt.Errorf("access level %d out of range", l)
	}
	return appendString(b, levelNames[l]), nil
}

// appendPlan appends a plan's name; an unknown plan is an error, as it is
// for Plan.MarshalJSON.
func appendPlan(b []byte, p Plan) ([]byte, error) {
	if int(p) >= len(planLimits) {
		return b, fmt.Errorf("plan %d out of range", p)
	}
	return appendString(b, planLimits[p].name), nil
}

// AppendJSON implements JSONAppender.
func (v CardView) AppendJSON(b []byte) ([]byte, error) {
	b = append(b, `{"id":`...)
	b = appendString(b, v.ID)
	b = append(b, `,"version":`...)
	b = appendString(b, v.Version)
	b = append(b, `,"effective_access":`...)
	b, err := appendLevel(b, v.EffectiveAccess)
	if err != nil {
		return b, err
	}
	b = append(b, `,"address":`...)
	b = appendString(b, v.Address)
	b = append(b, `,"name":`...)
	b = appendString(b, v.Name)
	b = append(b, `,"note":`...)
	b = appendString(b, v.Note)
	b = append(b, `,"color_key":`...)
	b = appendString(b, v.ColorKey)
	if v.CoinID != "" {
		b = append(b, `,"coin_id":`...)
		b = appendString(b, v.CoinID)
	}
	if v.Grant != nil {
		b = append(b, `,"grant":`...)
		if b, err = appendLevel(b, *v.Grant); err != nil {
			return b, err
		}
	}
	return append(b, '}'), nil
}

// AppendJSON implements JSONAppender.
func (e CardEnvelope) AppendJSON(b []byte) ([]byte, error) {
	b, err := e.Card.AppendJSON(append(b, `{"card":`...))
	return append(b, '}'), err
}

// AppendJSON implements JSONAppender.
func (v PortfolioListView) AppendJSON(b []byte) ([]byte, error) {
	b = append(b, `{"cards":`...)
	if v.Cards == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, c := range v.Cards {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = c.AppendJSON(b); err != nil {
				return b, err
			}
		}
		b = append(b, ']')
	}
	b = append(b, `,"scope":`...)
	b = appendString(b, v.Scope)
	b = append(b, `,"included_card_ids":`...)
	b = appendStrings(b, v.IncludedCardIDs)
	return append(b, '}'), nil
}

// AppendJSON implements JSONAppender.
func (v MeView) AppendJSON(b []byte) ([]byte, error) {
	b = append(b, `{"account_id":`...)
	b = appendString(b, v.AccountID)
	if v.KeyID != "" {
		b = append(b, `,"key_id":`...)
		b = appendString(b, v.KeyID)
	}
	b = append(b, `,"capability":`...)
	b, err := appendLevel(b, v.Capability)
	if err != nil {
		return b, err
	}
	b = append(b, `,"plan":`...)
	if b, err = appendPlan(b, v.Plan); err != nil {
		return b, err
	}
	b = append(b, `,"accessible_card_ids":`...)
	b = appendStrings(b, v.AccessibleCardIDs)
	b = append(b, `,"accessible_space_ids":`...)
	b = appendStrings(b, v.AccessibleSpaceIDs)
	b = append(b, `,"portfolio_cards":`...)
	b = v.PortfolioCards.appendJSON(b)
	b = append(b, `,"bookmark_spaces":`...)
	b = v.BookmarkSpaces.appendJSON(b)
	b = append(b, `,"rate_limit":{"remaining":`...)
	if v.RateLimit.Remaining == nil {
		b = append(b, "null"...)
	} else {
		b = strconv.AppendInt(b, int64(*v.RateLimit.Remaining), 10)
	}
	return append(b, "}}"...), nil
}

func (u UsageView) appendJSON(b []byte) []byte {
	b = append(b, `{"used":`...)
	b = strconv.AppendInt(b, int64(u.Used), 10)
	b = append(b, `,"limit":`...)
	b = strconv.AppendInt(b, int64(u.Limit), 10)
	return append(b, '}')
}
