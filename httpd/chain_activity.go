package httpd

import (
	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/actors"
)

// The agents' chain-event feed, GET /history/activity: what the chain
// follower saw happen to the transactions of the cards' addresses
// (actors/chain_activity.go). It is addrwatch's extension of the Agent
// API, not part of the spec's v1, and pages by the spec's /events
// rules, whose parsing it shares (feedCursor); /events is unchanged. Its
// cursors start with a prefix of their own, so a cursor of one feed is
// refused by the other (422) instead of skipping records.

// activityCursorPrefix starts the feed's next_since cursors.
const activityCursorPrefix = "ca1."

// chainActivityView is the body of GET /history/activity.
type chainActivityView struct {
	Events    []actors.ChainEventView `json:"events"`
	NextSince string                  `json:"next_since"`
	HasMore   bool                    `json:"has_more"`
}

var chainActivityOperations = []operation{
	{id: "listChainActivity", method: fasthttp.MethodGet, path: "/history/activity", apis: bothAPIs,
		response: typeOf[chainActivityView](), status: fasthttp.StatusOK, serve: (*Server).listChainActivity},
}

func (s *Server) listChainActivity(r *request) error {
	page, err := askPage(s, r, func() (actors.QueryOf[actors.ChainActivityPage], error) {
		c, err := feedCursor(r.ctx, activityCursorPrefix)
		return actors.ChainActivityQuery{FeedCursor: c}, err
	})
	if err != nil {
		return err
	}
	return answer(r.ctx, fasthttp.StatusOK, chainActivityView{Events: page.Events, NextSince: feedCursorFor(activityCursorPrefix, page.NextSeq), HasMore: page.HasMore})
}
