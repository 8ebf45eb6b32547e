package deliver

import (
	"time"

	"github.com/addrwatch/addrwatch/actors"
	"github.com/addrwatch/addrwatch/notify/egress"
)

// budgets counts down, over one read of an account, what the budgets of
// the account and of each of its channels allow (Sender.Room): a read
// starts as many tries as they have room for, and leaves the rest to
// wait, rather than starting every due entry for the senders to refuse
// most (a burst gives an account hundreds at once, and it may send 20 a
// second after 200). The tries it starts still spend the budgets (the
// senders' Take); one refused all the same, because another caller spent
// them first ("send a test"), is held back (holdBack).
type budgets struct {
	sender  Sender
	account string
	// accounts are the account's budgets, by the egress.Limits they are
	// in (webhooks and ntfy share one, email has its own); channels are
	// each channel's.
	accounts map[*egress.Limits]*budgetLeft
	channels map[string]*channelLeft
	// waiting counts the entries held back; wait is how soon the first
	// budget that held one back has room again.
	waiting int
	wait    time.Duration
}

// budgetLeft is what one budget still allows in this read, and when it
// has room for one more.
type budgetLeft struct {
	sends int
	next  time.Duration
}

type channelLeft struct {
	budgetLeft
	budgets *egress.Limits
}

func newBudgets(sender Sender, account string) *budgets {
	return &budgets{sender: sender, account: account, accounts: map[*egress.Limits]*budgetLeft{}, channels: map[string]*channelLeft{}}
}

// take reports whether a try on ch may start now, and counts it if so;
// if not, it counts the entry as waiting. The budgets are asked once a
// read per channel (and per account budget): the tries this read starts
// are counted here, since they may not have spent anything yet.
func (b *budgets) take(ch actors.NotifyChannelTarget) bool {
	c := b.channels[ch.ID]
	if c == nil {
		r := b.sender.Room(b.account, ch)
		c = &channelLeft{budgetLeft: budgetLeft{sends: r.Channel.Sends, next: r.Channel.Next}, budgets: r.Budgets}
		b.channels[ch.ID] = c
		if b.accounts[r.Budgets] == nil {
			b.accounts[r.Budgets] = &budgetLeft{sends: r.Account.Sends, next: r.Account.Next}
		}
	}
	a := b.accounts[c.budgets]
	switch {
	case a.sends <= 0:
		b.hold(a.next)
		return false
	case c.sends <= 0:
		b.hold(c.next)
		return false
	}
	a.sends--
	c.sends--
	return true
}

func (b *budgets) hold(next time.Duration) {
	if b.waiting == 0 || next < b.wait {
		b.wait = next
	}
	b.waiting++
}

// budgetWaitMin is the shortest wait for the budgets: at 20 sends a
// second, an account is read for two at a time, not for each.
const budgetWaitMin = 100 * time.Millisecond

// setWaitingLocked notes the entries of account left for its budgets by
// its last read.
func (d *Deliverer) setWaitingLocked(account string, n int) {
	d.stats.WaitingForBudget += n - d.waiting[account]
	if n == 0 {
		delete(d.waiting, account)
	} else {
		d.waiting[account] = n
	}
	d.opts.Metrics.waitingForBudget(d.stats.WaitingForBudget)
}

// waitsForBudgetLocked reports whether account's last read left entries
// for its budgets and a read of it is to come, when they have room or
// sooner: an ack of its need not read it at once, since the budgets
// allow nothing more before then. An account being read is woken as
// usual (its read may have begun before the ack applied).
func (d *Deliverer) waitsForBudgetLocked(account string) bool {
	if d.waiting[account] == 0 {
		return false
	}
	_, scheduled := d.timers.at[account]
	return scheduled || d.queued[account]
}
