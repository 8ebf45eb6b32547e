package send

import (
	"math"

	"github.com/addrwatch/addrwatch/notify/egress"
)

// Room is what the budgets a channel's tries count against allow now
// (egress.Limits.Room), spending nothing: how many tries the account and
// the channel may start, and when each has room for one more. Each Send
// still spends them, and may still be refused (ClassRateLimited) when
// another caller spent them first.
type Room struct {
	Account egress.Room
	Channel egress.Room
	// Budgets are the budgets themselves: channels whose Room names the
	// same ones share their account's budget (webhooks and ntfy share
	// the HTTP client's, email has its own). Nil when the channel's tries
	// count against none, and then the room is unbounded.
	Budgets *egress.Limits
}

// unbounded is the room of tries that count against no budget.
var unbounded = Room{Account: egress.Room{Sends: math.MaxInt}, Channel: egress.Room{Sends: math.MaxInt}}

// roomOf is what limits allow account and channel now.
func roomOf(limits *egress.Limits, account, channel string) Room {
	if limits == nil {
		return unbounded
	}
	acct, ch := limits.Room(account, channel)
	return Room{Account: acct, Channel: ch, Budgets: limits}
}

// Room is what the budgets allow account's webhook channel now.
func (w *Webhook) Room(account, channelID string) Room {
	return roomOf(w.HTTP.Limits(), account, channelID)
}

// Room is what the budgets allow account's ntfy channel now.
func (n *Ntfy) Room(account, channelID string) Room {
	return roomOf(n.HTTP.Limits(), account, channelID)
}

// Room is what the budgets allow account's email channel now.
func (e *Email) Room(account, channelID string) Room {
	return roomOf(e.Limits, account, channelID)
}

// Unbounded is the room of a try that counts against no budget (one
// refused before it could spend any: no relay, a kind not known).
func Unbounded() Room { return unbounded }
