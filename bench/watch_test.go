package main

import (
	"strings"
	"testing"
	"time"
)

func TestParseWatch(t *testing.T) {
	t.Parallel()
	cfg, err := parseArgs([]string{"watch"}, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	w := cfg.watch
	if cfg.command != "watch" || cfg.accounts != watchAccountsDefault || w.server != "bin/addrwatchd" || w.addresses != 1000 ||
		w.source != "btcd" || w.blocks != 50 || w.blockTxs != 20 || w.watchedShare != 0.25 || w.chainPoll != 2*time.Second || w.watchedPerBlock() != 5 {
		t.Fatalf("watch defaults: %+v %+v", cfg, w)
	}
	cfg, err = parseArgs([]string{"--addresses", "20", "watch", "--accounts", "2", "--blocks", "3", "--block-txs", "4", "--chain-poll", "100ms", "--server", "/x/addrwatchd", "--source", "esplora", "--json"}, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	w = cfg.watch
	if cfg.accounts != 2 || w.addresses != 20 || w.source != "esplora" || w.blocks != 3 || w.blockTxs != 4 || w.chainPoll != 100*time.Millisecond || w.server != "/x/addrwatchd" ||
		!cfg.jsonOut || w.watchedPerBlock() != 1 {
		t.Fatalf("parsed %+v %+v", cfg, w)
	}
}

func TestParseWatchErrors(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"watch", "reads"}, "watch takes no scenarios"},
		{[]string{"reads", "--addresses", "5"}, "--addresses is for watch"},
		{[]string{"read-ratios", "--chain-poll", "1s"}, "--chain-poll is for watch"},
		{[]string{"watch", "--addresses", "10000"}, "use --accounts 91 or more"},
		{[]string{"watch", "--addresses", "5", "--accounts", "6"}, "at least --accounts"},
		{[]string{"watch", "--blocks", "0"}, "--blocks"},
		{[]string{"watch", "--block-txs", "0"}, "--block-txs"},
		{[]string{"watch", "--watched-share", "0"}, "--watched-share"},
		{[]string{"watch", "--watched-share", "1.5"}, "--watched-share"},
		{[]string{"watch", "--chain-poll", "0s"}, "--chain-poll"},
		{[]string{"watch", "--nodes", "2"}, "--nodes must be 1, 3 or 5"},
		{[]string{"watch", "--leader-kills", "1"}, "--leader-kills needs --nodes 3"},
		{[]string{"watch", "--blocks", "3", "--reorgs", "4"}, "--reorgs must be from 0 to --blocks"},
		{[]string{"reads", "--nodes", "3"}, "--nodes is for watch"},
		{[]string{"watch", "--source", "bitcoind"}, "--source must be btcd, electrum, esplora"},
		{[]string{"reads", "--source", "electrum"}, "--source is for watch"},
	} {
		_, err := parseArgs(c.args, noEnv)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("parseArgs(%q) = %v, want an error containing %q", c.args, err, c.want)
		}
	}
}

// The addresses go over the accounts as evenly as can be, and each
// account's over its Account cards and Bitcoin Spaces within the plan's
// limits, with both kinds of card wherever there are two addresses.
func TestAddressesFitThePlan(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ total, accounts int }{{1000, 10}, {10000, 91}, {20, 2}, {20, 20}, {7, 3}, {110, 1}} {
		shares := spreadAddresses(c.total, c.accounts)
		sum, lo, hi := 0, shares[0], shares[0]
		for _, n := range shares {
			sum, lo, hi = sum+n, min(lo, n), max(hi, n)
			portfolio, spaces := cardPlaces(n)
			placed := portfolio
			for _, s := range spaces {
				if s < 1 || s > cardsPerPlaceMax {
					t.Errorf("%d addresses: a Space of %d cards", n, s)
				}
				placed += s
			}
			if placed != n || portfolio > cardsPerPlaceMax || len(spaces) > spacesPerAccountMax {
				t.Errorf("%d addresses: %d Account cards and Spaces %v", n, portfolio, spaces)
			}
			if n >= 2 && (portfolio == 0 || len(spaces) == 0) {
				t.Errorf("%d addresses: %d Account cards and Spaces %v, want both kinds", n, portfolio, spaces)
			}
		}
		if sum != c.total || hi-lo > 1 {
			t.Errorf("%d over %d accounts: %v", c.total, c.accounts, shares)
		}
	}
	if p, s := cardPlaces(watchAddressesPerAccountMax); p != cardsPerPlaceMax || len(s) != spacesPerAccountMax {
		t.Errorf("a full account: %d Account cards and Spaces %v", p, s)
	}
}

// Consecutive payments go to different accounts, and every address is
// paid before any is paid twice.
func TestInterleave(t *testing.T) {
	t.Parallel()
	a := &watchAccount{id: "a", addresses: []string{"a1", "a2", "a3"}}
	b := &watchAccount{id: "b", addresses: []string{"b1"}}
	var got []string
	for _, tg := range interleave([]*watchAccount{a, b}) {
		got = append(got, tg.account.id+":"+tg.address)
	}
	if strings.Join(got, " ") != "a:a1 b:b1 a:a2 a:a3" {
		t.Errorf("interleave: %v", got)
	}
}

func TestNearestRank(t *testing.T) {
	t.Parallel()
	xs := []float64{5, 1, 4, 2, 3}
	if nearestRank(xs, 0.5) != 3 || nearestRank(xs, 0.99) != 5 || nearestRank(xs, 1) != 5 || nearestRank(xs, 0.2) != 1 || nearestRank(nil, 0.5) != 0 {
		t.Errorf("nearestRank of %v is wrong", xs)
	}
}

// A figure not read is null in the JSON and said so in the text, never a
// zero that passes for a measurement.
func TestWatchReportFigures(t *testing.T) {
	t.Parallel()
	cfg, _ := parseArgs([]string{"watch", "--addresses", "100", "--blocks", "2"}, noEnv)
	res := &watchResult{rssBefore: []metricReading{{1e6, true}}, rssAfter: []metricReading{{1.5e6, true}}, blocks: []blockSample{
		{height: 433, touched: 5, confirmed: 5, latency: time.Second, mempoolLatency: 3 * time.Second, requests: requestCounts{follower: 300}, cpuSeconds: 0.5, cpuRead: true, sweeps: 1},
		{height: 434, touched: 4, confirmed: 4, latency: 2 * time.Second, mempoolLatency: time.Second, requests: requestCounts{follower: 320}, cpuRead: false, sweeps: 2},
	}}
	r := buildWatchReport(cfg, res)
	if r.BlockLatency.P50 != 1e6 || r.BlockLatency.P99 != 2e6 || r.MempoolLatency.Max != 3e6 || r.RequestsPerBlock.Mean != 310 ||
		r.Touched != 9 || r.ConfirmedSeen != 9 || r.RSSPerAddress == nil || *r.RSSPerAddress != 5000 || r.SharedBlocks != 1 {
		t.Errorf("report %+v", r)
	}
	if r.CPUPerBlock != nil || r.Blocks[0].CPUSeconds == nil || r.Blocks[1].CPUSeconds != nil {
		t.Errorf("a block whose CPU was not read: per block %v, blocks %v %v", r.CPUPerBlock, r.Blocks[0].CPUSeconds, r.Blocks[1].CPUSeconds)
	}
	var text strings.Builder
	printWatchReport(&text, r)
	for _, want := range []string{"block announced → balances readable", "1.00s", "2.00s", "server CPU per block: not read", "5.0 KB a watched address", "seen confirmed in their block: 9", "of which 1 block(s) took more than one sweep",
		"following btcd", "requests to btcd per block: mean 310, max 320 (3.1 an address), as the follower counted its reads"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("the report lacks %q:\n%s", want, text.String())
		}
	}
}

// Where the source counts the requests it answers, those are the
// requests to it, and the follower's reads are reported beside them.
func TestWatchReportCountsAtTheSource(t *testing.T) {
	t.Parallel()
	cfg, _ := parseArgs([]string{"watch", "--addresses", "100", "--blocks", "2", "--source", "esplora"}, noEnv)
	res := &watchResult{firstRequests: requestCounts{follower: 300, source: 310, counted: true}, blocks: []blockSample{
		{height: 433, requests: requestCounts{follower: 300, source: 3_400, counted: true}, cpuRead: true, sweeps: 1},
		{height: 434, requests: requestCounts{follower: 320, source: 3_600, counted: true}, cpuRead: true, sweeps: 1},
	}}
	r := buildWatchReport(cfg, res)
	if r.Source != "esplora" || r.RequestsCountedBy != "source" || r.RequestsPerBlock.Mean != 3_500 || r.FollowerRequestsPerBlock.Mean != 310 ||
		r.FirstRequests != 310 || r.FirstFollower != 300 || r.Blocks[1].Requests != 3_600 || r.Blocks[1].FollowerRequests != 320 {
		t.Errorf("report %+v", r)
	}
	var text strings.Builder
	printWatchReport(&text, r)
	for _, want := range []string{"following esplora", "requests to esplora per block: mean 3,500, max 3,600 (35.0 an address), as the esplora test server counted them; the follower's reads: mean 310, max 320",
		"(310 requests to esplora)"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("the report lacks %q:\n%s", want, text.String())
		}
	}
}

// A wait is read every 25 ms at first, then at a twentieth of how long
// it has lasted, so a reading is off by at most that share.
func TestPollInterval(t *testing.T) {
	t.Parallel()
	for waited, want := range map[time.Duration]time.Duration{0: 25 * time.Millisecond, 400 * time.Millisecond: 25 * time.Millisecond, 2 * time.Second: 100 * time.Millisecond, 10 * time.Second: 500 * time.Millisecond} {
		if got := pollInterval(waited); got != want {
			t.Errorf("pollInterval(%s) = %s, want %s", waited, got, want)
		}
	}
}
