package site

import (
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/httpd/views"
)

// A History search in the page's address: q (txid, address or note),
// card (the combined History only), from and to (UTC dates), direction
// and sort, and offset. A link the page draws (a pager's, a column's
// sort) keeps every other field, so paging never drops a filter.

// historySearchCharsMax bounds the search text: a txid is 64.
const historySearchCharsMax = 100

// historyOffsetMax bounds the offset a page is asked at: far past any
// History, so a larger one is a mistyped address.
const historyOffsetMax = 1_000_000

// historyForm is the search as typed, to draw the form with, and the
// query it makes.
type historyForm struct {
	Text, Card, From, To, Direction, Sort string
	query                                 views.HistoryQuery
}

// parseHistoryForm reads the search from the page's address. Every
// problem is said in the owner's words (problems), never by an error
// status alone.
func parseHistoryForm(args *fasthttp.Args, page string) (historyForm, []string) {
	f := historyForm{Text: strings.TrimSpace(string(args.Peek("q"))), Card: string(args.Peek("card")), From: string(args.Peek("from")),
		To: string(args.Peek("to")), Direction: string(args.Peek("direction")), Sort: string(args.Peek("sort"))}
	q := views.HistoryQuery{Page: page, Text: f.Text, Sort: views.SortNewest}
	var problems []string
	if !utf8.ValidString(f.Text) || utf8.RuneCountInString(f.Text) > historySearchCharsMax {
		problems = append(problems, "The search holds at most "+strconv.Itoa(historySearchCharsMax)+" characters: part of a transaction ID, an address or a note.")
	}
	if page == "" {
		q.Card = f.Card
	}
	var bad bool
	if q.From, bad = parseHistoryDate(f.From); bad {
		problems = append(problems, "“From” is not a date: write it as 2026-01-31.")
	}
	if q.To, bad = parseHistoryDate(f.To); bad {
		problems = append(problems, "“To” is not a date: write it as 2026-01-31.")
	}
	if q.From != nil && q.To != nil && q.To.Before(*q.From) {
		problems = append(problems, "“To” is before “From”: no transaction could be on those dates.")
	}
	switch f.Direction {
	case "", views.DirectionReceived, views.DirectionSent:
		q.Direction = f.Direction
	default:
		problems = append(problems, "Direction is received, sent, or both.")
	}
	if f.Sort != "" {
		if !slices.Contains(views.HistorySorts, views.HistorySort(f.Sort)) {
			problems = append(problems, "Sort by date or by amount, either way: that order is not one of them.")
		} else {
			q.Sort = views.HistorySort(f.Sort)
		}
	}
	if raw := args.Peek("offset"); raw != nil {
		n, err := strconv.Atoi(string(raw))
		if err != nil || n < 0 || n > historyOffsetMax {
			problems = append(problems, "That page number is not one of this History's: start from the first page.")
		} else {
			q.Offset = n
		}
	}
	f.query = q
	return f, problems
}

// parseHistoryDate reads a UTC date (nil for none); bad says it is not
// one.
func parseHistoryDate(s string) (*time.Time, bool) {
	if s == "" {
		return nil, false
	}
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return nil, true
	}
	return &t, false
}

// filtered reports whether the search keeps fewer than every transaction.
func (f historyForm) filtered() bool {
	q := f.query
	return q.Text != "" || q.Card != "" || q.From != nil || q.To != nil || q.Direction != ""
}

// link is the page's address with the search and offset, and sort in
// place of the search's own when it is not "".
func (f historyForm) link(path string, offset int, sort views.HistorySort) string {
	v := url.Values{}
	for _, kv := range [][2]string{{"q", f.Text}, {"card", f.Card}, {"from", f.From}, {"to", f.To}, {"direction", f.Direction}} {
		if kv[1] != "" {
			v.Set(kv[0], kv[1])
		}
	}
	if sort == "" {
		sort = f.query.Sort
	}
	if sort != views.SortNewest {
		v.Set("sort", string(sort))
	}
	if offset > 0 {
		v.Set("offset", strconv.Itoa(offset))
	}
	if len(v) == 0 {
		return path
	}
	return path + "?" + v.Encode()
}
