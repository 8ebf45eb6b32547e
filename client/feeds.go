package client

import "context"

// The two feeds an agent polls by cursor: the spec's change feed
// (GET /events) and addrwatch's chain activity (GET /history/activity,
// our extension). Both follow the spec's polling procedure, which
// feedPoller is: pass the saved next_since as since (none on the first
// poll), save the new next_since after every page, even an empty one
// (the cursor moves past records the key cannot see), fetch the next
// page at once while has_more is true, and stop at a page that is empty
// or says no more.

// feedPoller polls one feed with its cursor.
type feedPoller[E any] struct {
	cursor string
	// page asks the feed for the page after since (nil: the first poll).
	page func(ctx context.Context, since *string) (feedPage[E], error)
}

// feedPage is what one page of a feed says.
type feedPage[E any] struct {
	events    []E
	nextSince string
	hasMore   bool
}

// Cursor is the next_since to save: pass it to NewEvents or
// NewChainActivity when the agent starts again.
func (f *feedPoller[E]) Cursor() string { return f.cursor }

// Poll returns every event since the cursor, following has_more, and
// keeps the new cursor. On an error it returns the events of the pages
// read before it, whose cursor it kept: a retry goes on from there.
func (f *feedPoller[E]) Poll(ctx context.Context) ([]E, error) {
	var all []E
	for {
		var since *string
		if f.cursor != "" {
			since = &f.cursor
		}
		p, err := f.page(ctx, since)
		if err != nil {
			return all, err
		}
		all = append(all, p.events...)
		f.cursor = p.nextSince
		if !p.hasMore || len(p.events) == 0 {
			return all, nil
		}
	}
}

// EventPoller polls the change feed with its cursor (the spec's polling
// procedure): each Poll returns the events since the last one, following
// has_more, and keeps next_since for the next.
type EventPoller struct{ feedPoller[Event] }

// NewEvents starts a poller of the change feed; cursor is a saved
// next_since, or "" for the feed's default window (the past 24 hours).
func (a *Agent) NewEvents(cursor string) *EventPoller {
	return &EventPoller{feedPoller[Event]{cursor: cursor, page: func(ctx context.Context, since *string) (feedPage[Event], error) {
		r, err := a.API.ListEventsWithResponse(ctx, &ListEventsParams{Since: since})
		if err == nil {
			err = Check(r.HTTPResponse, r.Body)
		}
		if err != nil {
			return feedPage[Event]{}, err
		}
		return feedPage[Event]{r.JSON200.Events, r.JSON200.NextSince, r.JSON200.HasMore}, nil
	}}}
}

// ChainActivityPoller polls the chain events of the cards the key can
// read (GET /history/activity) with its cursor, as EventPoller polls the
// change feed. An event's ID is stable: an agent that keeps the IDs it
// has handled can tell an event seen again from a new one.
type ChainActivityPoller struct{ feedPoller[ChainEvent] }

// NewChainActivity starts a poller of the chain events; cursor is a
// saved next_since, or "" for the past 24 hours.
func (a *Agent) NewChainActivity(cursor string) *ChainActivityPoller {
	return &ChainActivityPoller{feedPoller[ChainEvent]{cursor: cursor, page: func(ctx context.Context, since *string) (feedPage[ChainEvent], error) {
		r, err := a.API.ListChainActivityWithResponse(ctx, &ListChainActivityParams{Since: since})
		if err == nil {
			err = Check(r.HTTPResponse, r.Body)
		}
		if err != nil {
			return feedPage[ChainEvent]{}, err
		}
		return feedPage[ChainEvent]{r.JSON200.Events, r.JSON200.NextSince, r.JSON200.HasMore}, nil
	}}}
}
