package actors

import (
	"fmt"
	"testing"
)

// BenchmarkDueDeliveriesQuery is the deliverer's read of an account at
// the outbox's bound: outboxPendingMax pending entries over 10 channels
// and 110 cards, every head due.
func BenchmarkDueDeliveriesQuery(b *testing.B) {
	a := &Account{Notify: &NotifyState{}}
	for i := range notifyChannelsMax {
		a.Notify.Channels = append(a.Notify.Channels, &NotifyChannel{ID: fmt.Sprint("nc_", i), Kind: ChannelWebhook, Enabled: true})
	}
	for i := range 110 {
		a.Portfolio = append(a.Portfolio, &Card{ID: fmt.Sprint("c", i), Name: fmt.Sprint("card ", i)})
	}
	for i := range outboxPendingMax {
		e := ChainEvent{Kind: ChainTxSeen, CardID: fmt.Sprint("c", (i/notifyChannelsMax)%110), TxID: fmt.Sprintf("%064d", i), Occurrence: 1}
		ch := fmt.Sprint("nc_", i%notifyChannelsMax)
		a.Notify.Outbox = append(a.Notify.Outbox, &OutboxEntry{ID: DeliveryEntryID(e.ID(), ch), Event: e, ChannelID: ch, State: DeliveryPending, NextAt: 1})
	}
	b.ReportAllocs()
	for b.Loop() {
		d, err := DueDeliveriesQuery{Now: 2}.answer(a, Principal{Kind: PrincipalSystem}, LevelWrite, 2)
		if err != nil || len(d.Due) != dueDeliveriesMax {
			b.Fatal(len(d.Due), err)
		}
	}
}
