package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/addrwatch/addrwatch/internal/regtest"
	"github.com/addrwatch/addrwatch/notify/deliver"
)

// The throughput phase of bench notify, in order:
//
//  1. --burst-accounts accounts of its own, each with --burst-addresses
//     watched addresses on its cards (as watch lays them out), a default
//     rule that tells only tx_confirmed, and --burst-channels webhook
//     channels to a receiver of its own; the first account's last channel
//     goes to a receiver that answers after --slow-answer;
//  2. a payment to every one of those addresses, many to a transaction
//     (PayAll), and a wait until the follower stands still (it has seen
//     them in the mempool, which tells nobody: the rule wants only
//     tx_confirmed);
//  3. one block that confirms them all, from whose announcement every
//     webhook is timed, until every channel got a tx_confirmed for each of
//     its account's addresses, the slow channel's included.
//
// The node's own budgets (notify/egress/limits.go) bound what it may send:
// each account 20 a second after a burst of 200, each channel 5 a second
// after 50. The defaults (60 accounts of 4 channels) allow 1,200 a second
// once the bursts are spent; burstBudget says what a run's allow.

// burstOutputsMax is how many addresses one transaction pays. Every read
// of a paid address returns the whole transaction, so a large one makes
// the follower's reads of the block slow: at 500 outputs the follower
// read the block's 6,000 addresses at about 50 a second, which then fed
// the deliverer (measured; README.md).
const burstOutputsMax = 50

// burstSample is what the throughput phase measured.
type burstSample struct {
	accounts, channels, addresses int
	slowAnswer                    time.Duration
	expected                      int // webhooks expected, the slow channel's included
	slowExpected                  int
	// fast and slow are, per webhook received, its arrival after the
	// block's announcement: on the channels that answer at once, and on
	// the slow one.
	fast, slow []time.Duration
	missing    int
	// swept is when the follower finished its sweep at the block, after
	// the announcement: every event was in the outbox by then.
	swept time.Duration
	// firstObserved is how long the follower took to observe the
	// phase's addresses once; paidIn, how long paying them took.
	firstObserved, paidIn time.Duration
	transactions          int
	// before and after are the deliverer's counts around the block.
	before, after deliver.Stats
	statsRead     bool
}

// burst sets up the phase, pays, mines and measures (the steps above).
func (n *notifyRun) burst(ctx context.Context, stderr io.Writer) (*burstSample, error) {
	nc := n.cfg.notify
	s := &burstSample{accounts: nc.burstAccounts, channels: nc.burstChannels, addresses: nc.burstAddresses, slowAnswer: nc.slowAnswer}
	accounts, err := n.burstAccounts(ctx, s, stderr)
	if err != nil {
		return nil, err
	}
	chans, err := addHookChannels(n.c, n.cluster.public(), n.rc, accounts, nc.burstChannels, nc.slowAnswer)
	if err != nil {
		return nil, err
	}
	paid := time.Now()
	txids, err := n.payAll(accounts)
	if err != nil {
		return nil, err
	}
	s.paidIn, s.transactions = time.Since(paid), len(distinctValues(txids))
	if err := n.waitQuiet(ctx); err != nil {
		return nil, err
	}
	fmt.Fprintf(stderr, "notify: burst: %s addresses paid in %d transactions (%s), seen in the mempool; mining the block …\n",
		commas(int64(len(txids))), s.transactions, s.paidIn.Round(time.Millisecond))

	var want []hookKey
	for i, a := range accounts {
		for _, ch := range chans[i] {
			for _, address := range a.addresses {
				want = append(want, hookKey{channel: ch, kind: kindConfirmed, txid: txids[address], address: address})
				if ch.delay > 0 {
					s.slowExpected++
				}
			}
		}
	}
	s.expected = len(want)
	s.before, s.statsRead = readDeliverer(n.c, n.cfg)
	hashes, err := n.node.Mine(1)
	if err != nil {
		return nil, err
	}
	announced := n.ann.announced(hashes[0], time.Now())
	swept := make(chan time.Time, 1)
	go func() {
		// The follower's sweep at the block ends once every address it
		// paid was observed: every event is in the outbox then.
		if _, err := n.waitTip(ctx, hashes[0]); err == nil {
			swept <- time.Now()
		}
		close(swept)
	}()
	if s.missing, err = n.tally.wait(ctx, keySet(want), burstWaitMax); err != nil {
		return s, err
	}
	if at, ok := <-swept; ok {
		s.swept = at.Sub(announced)
	}
	var ok bool
	s.after, ok = n.delivererSettled(ctx)
	s.statsRead = s.statsRead && ok
	for _, k := range want {
		a, got := n.tally.arrived(k)
		switch {
		case !got:
		case k.channel.delay > 0:
			s.slow = append(s.slow, a.at.Sub(announced))
		default:
			s.fast = append(s.fast, a.at.Sub(announced))
		}
		if got && a.event.BlockHash != hashes[0] {
			n.tally.wrongBlock++
		}
	}
	fmt.Fprintf(stderr, "notify: burst: %s of %s webhooks received, the last %s after the block's announcement\n",
		commas(int64(len(s.fast)+len(s.slow))), commas(int64(s.expected)), fmtLatency(max(slowest(s.fast), slowest(s.slow))))
	return s, nil
}

// burstAccounts creates the phase's accounts with their cards and rules,
// and waits until the follower has observed every address once.
func (n *notifyRun) burstAccounts(ctx context.Context, s *burstSample, stderr io.Writer) ([]*watchAccount, error) {
	sub := *n.cfg
	sub.accounts = s.accounts
	accounts, err := createWatchAccounts(n.c, &sub)
	if err != nil {
		return nil, err
	}
	err = forEachBounded(len(accounts), setupParallelism, func(i int) error {
		return setDefaultRule(n.c, n.cluster.public(), accounts[i], kindConfirmed)
	})
	if err != nil {
		return nil, err
	}
	if err := addWatchedCards(n.c, n.cluster.public(), accounts, s.accounts*s.addresses); err != nil {
		return nil, err
	}
	added := time.Now()
	fmt.Fprintf(stderr, "notify: burst: %d accounts with %s watched addresses; waiting for the follower to observe every one …\n",
		len(accounts), commas(int64(s.accounts*s.addresses)))
	for _, a := range accounts {
		if _, _, err := waitRecord(ctx, n.c, n.cluster.public, a, n.waitMax(), "every address observed", observedAll(a.addresses)); err != nil {
			return nil, err
		}
	}
	s.firstObserved = time.Since(added)
	return accounts, nil
}

// payAll pays every address of the accounts, burstOutputsMax to a
// transaction, and returns each address's transaction.
func (n *notifyRun) payAll(accounts []*watchAccount) (map[string]string, error) {
	targets := interleave(accounts)
	txids := make(map[string]string, len(targets))
	for start := 0; start < len(targets); start += burstOutputsMax {
		var payments []regtest.Payment
		for _, t := range targets[start:min(len(targets), start+burstOutputsMax)] {
			payments = append(payments, regtest.Payment{Address: t.address, Sats: paymentSats})
		}
		txid, err := n.node.PayAll(payments...)
		if err != nil {
			return nil, err
		}
		for _, p := range payments {
			txids[p.Address] = txid
		}
	}
	return txids, nil
}

// delivererSettled reads the deliverer's counts once it has no try in
// flight (the slow receiver's last answers come after their arrival), or
// as they stand after a few slow answers.
func (n *notifyRun) delivererSettled(ctx context.Context) (deliver.Stats, bool) {
	deadline := time.Now().Add(2*n.cfg.notify.slowAnswer + 5*time.Second)
	for {
		st, ok := readDeliverer(n.c, n.cfg)
		if !ok || st.InFlight == 0 || time.Now().After(deadline) || sleepCtx(ctx, followerReadInterval) != nil {
			return st, ok
		}
	}
}

// readDeliverer reads the deliverer's counts from the leader's admin
// status.
func readDeliverer(c *client, cfg *config) (deliver.Stats, bool) {
	var status struct {
		Deliverer *deliver.Stats `json:"deliverer"`
	}
	if err := c.call("GET", cfg.admin+"/admin/v1/cluster", cfg.adminToken, nil, 200, &status); err != nil || status.Deliverer == nil {
		return deliver.Stats{}, false
	}
	return *status.Deliverer, true
}

func distinctValues(m map[string]string) map[string]bool {
	set := map[string]bool{}
	for _, v := range m {
		set[v] = true
	}
	return set
}
