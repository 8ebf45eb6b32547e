package main

import (
	"flag"
	"fmt"
	"time"

	"github.com/addrwatch/addrwatch/notify/egress"
)

// notifyConfig is what the notify command's own flags say; it also reads
// watch's (the server, the latency phase's accounts, addresses, blocks
// and payments).
type notifyConfig struct {
	burstAccounts  int           // accounts of the throughput phase; 0 skips it
	burstChannels  int           // webhook channels of each of them
	burstAddresses int           // watched addresses of each, all paid in the burst's block
	slowAnswer     time.Duration // how long the slow receiver takes to answer
}

// Defaults of the throughput phase: 60 accounts of four channels each
// are budgets of 60 × 20 = 1,200 sends a second (egress.AccountRateDefault)
// and 240 × 5 = 1,200 (EndpointRateDefault), above the 1,000; 100
// addresses each make 24,000 deliveries, which at 1,000 a second hold the
// rate for about 24 s.
const (
	notifyBurstAccountsDefault  = 60
	notifyBurstChannelsDefault  = 4
	notifyBurstAddressesDefault = 100
	notifySlowAnswerDefault     = 2 * time.Second
	// notifyChannelsMax is actors' notifyChannelsMax: the channels an
	// account may have.
	notifyChannelsMax = 10
)

// notifyOnlyFlags are the flags no other command reads.
var notifyOnlyFlags = []string{"burst-accounts", "burst-channels", "burst-addresses", "slow-answer"}

func addNotifyFlags(fs *flag.FlagSet, n *notifyConfig) {
	fs.IntVar(&n.burstAccounts, "burst-accounts", notifyBurstAccountsDefault, "notify: accounts of the throughput phase (0 skips it)")
	fs.IntVar(&n.burstChannels, "burst-channels", notifyBurstChannelsDefault, "notify: webhook channels of each throughput account")
	fs.IntVar(&n.burstAddresses, "burst-addresses", notifyBurstAddressesDefault, "notify: watched addresses of each throughput account, all paid in one block")
	fs.DurationVar(&n.slowAnswer, "slow-answer", notifySlowAnswerDefault, "notify: how long the slow receiver (one channel of the throughput phase) takes to answer")
}

// checkNotifyFlags refuses notify's flags on another command and bounds
// them on notify, which takes watch's flags too but not its faults.
func checkNotifyFlags(cfg *config, set map[string]bool) error {
	if cfg.command != "notify" {
		for _, name := range notifyOnlyFlags {
			if set[name] {
				return fmt.Errorf("--%s is for notify", name)
			}
		}
		return nil
	}
	n := cfg.notify
	switch {
	case cfg.watch.reorgs != 0 || cfg.watch.leaderKills != 0:
		return fmt.Errorf("notify makes no reorgs or leader kills: system_test has those faults")
	case n.burstAccounts < 0:
		return fmt.Errorf("--burst-accounts must be 0 (no throughput phase) or more")
	case n.burstAccounts > 0 && (n.burstChannels < 1 || n.burstChannels > notifyChannelsMax):
		return fmt.Errorf("--burst-channels must be from 1 to %d, the channels an account may have", notifyChannelsMax)
	case n.burstAccounts > 0 && (n.burstAddresses < 1 || n.burstAddresses > watchAddressesPerAccountMax):
		return fmt.Errorf("--burst-addresses must be from 1 to %d, the cards an extended account holds", watchAddressesPerAccountMax)
	case n.slowAnswer < 0 || n.slowAnswer >= egress.TotalTimeoutDefault:
		// A receiver slower than the server's whole timeout of a try
		// is a failing one, which is not what the phase measures.
		return fmt.Errorf("--slow-answer must be from 0 to under %s, the server's whole timeout of a try", egress.TotalTimeoutDefault)
	}
	return nil
}
