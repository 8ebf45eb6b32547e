package main

import (
	"flag"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// watchConfig is what the watch command's own flags say.
type watchConfig struct {
	server       string        // the addrwatchd binary
	source       string        // the chain source the servers follow: one of watchSources
	addresses    int           // watched addresses in all
	blocks       int           // blocks mined and timed
	blockTxs     int           // transactions sent before each block
	watchedShare float64       // the share of them that pay watched addresses
	chainPoll    time.Duration // the server's --chain-poll
	nodes        int           // addrwatchd processes, one raft cluster
	reorgs       int           // reorgs made during the blocks
	leaderKills  int           // times the raft leader is killed during the blocks
}

// Defaults of the watch command: the 10 accounts and a thousand
// addresses, and the server's own --chain-poll, so that the figures are
// those of the server as it ships.
const (
	watchAccountsDefault  = 10
	watchAddressesDefault = 1000
	watchBlocksDefault    = 50
	watchBlockTxsDefault  = 20
	watchShareDefault     = 0.25
	watchChainPollDefault = 2 * time.Second
	// watchNodesMax bounds --nodes: each node is a process with its own
	// copy of every account on the same machine.
	watchNodesMax = 5
)

// watchOnlyFlags are the flags no other command reads; naming one
// without watch is a mistake worth saying.
var watchOnlyFlags = []string{"server", "source", "addresses", "blocks", "block-txs", "watched-share", "chain-poll", "nodes", "reorgs", "leader-kills"}

func addWatchFlags(fs *flag.FlagSet, w *watchConfig) {
	fs.StringVar(&w.server, "server", "bin/addrwatchd", "watch: the addrwatchd binary to start")
	fs.StringVar(&w.source, "source", watchSourceBtcd, "watch: the chain source the servers follow, over the regtest node: btcd itself, or an electrum or esplora test server over it")
	fs.IntVar(&w.addresses, "addresses", watchAddressesDefault, "watch: watched addresses in all, spread over the accounts")
	fs.IntVar(&w.blocks, "blocks", watchBlocksDefault, "watch: blocks to mine and time")
	fs.IntVar(&w.blockTxs, "block-txs", watchBlockTxsDefault, "watch: transactions sent before each block")
	fs.Float64Var(&w.watchedShare, "watched-share", watchShareDefault, "watch: the share of each block's transactions that pay watched addresses")
	fs.DurationVar(&w.chainPoll, "chain-poll", watchChainPollDefault, "watch: the server's --chain-poll")
	fs.IntVar(&w.nodes, "nodes", 1, "watch: addrwatchd nodes in one raft cluster, all following the same btcd")
	fs.IntVar(&w.reorgs, "reorgs", 0, "watch: reorgs of the newest block or two during the blocks, then an audit of every payment")
	fs.IntVar(&w.leaderKills, "leader-kills", 0, "watch: times the raft leader is killed (SIGKILL) and restarted during the blocks (needs --nodes 3 or more)")
}

// flagsSet lists the flags the command line named.
func flagsSet(fs *flag.FlagSet) map[string]bool {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	return set
}

// checkWatchFlags refuses watch's flags on a command other than watch
// and notify, and bounds them on those, where --accounts defaults to
// watchAccountsDefault.
func checkWatchFlags(cfg *config, set map[string]bool) error {
	if cfg.command != "watch" && cfg.command != "notify" {
		for _, name := range watchOnlyFlags {
			if set[name] {
				return fmt.Errorf("--%s is for watch and notify", name)
			}
		}
		return nil
	}
	if cfg.accounts == 0 {
		cfg.accounts = watchAccountsDefault
	}
	w := cfg.watch
	switch {
	case w.server == "":
		return fmt.Errorf("--server names the addrwatchd binary")
	case !slices.Contains(watchSources, w.source):
		return fmt.Errorf("--source must be %s", strings.Join(watchSources, ", "))
	case w.addresses < cfg.accounts:
		return fmt.Errorf("--addresses must be at least --accounts (%d), so that every account watches one", cfg.accounts)
	case w.addresses > cfg.accounts*watchAddressesPerAccountMax:
		return fmt.Errorf("%d addresses over %d accounts is more than the %d cards an extended account holds: use --accounts %d or more",
			w.addresses, cfg.accounts, watchAddressesPerAccountMax, (w.addresses+watchAddressesPerAccountMax-1)/watchAddressesPerAccountMax)
	case w.blocks < 1:
		return fmt.Errorf("--blocks must be at least 1")
	case w.blockTxs < 1:
		return fmt.Errorf("--block-txs must be at least 1")
	case !(w.watchedShare > 0 && w.watchedShare <= 1): // NaN too
		return fmt.Errorf("--watched-share must be above 0 and at most 1")
	case w.chainPoll <= 0:
		return fmt.Errorf("--chain-poll must be positive")
	case w.nodes < 1 || w.nodes > watchNodesMax || w.nodes%2 == 0:
		return fmt.Errorf("--nodes must be 1, 3 or 5: a raft cluster of an even size tolerates no more failures than one node fewer")
	case w.reorgs < 0 || w.reorgs > w.blocks:
		return fmt.Errorf("--reorgs must be from 0 to --blocks (%d): each follows a block", w.blocks)
	case w.leaderKills < 0 || w.leaderKills > w.blocks:
		return fmt.Errorf("--leader-kills must be from 0 to --blocks (%d): each happens in a block", w.blocks)
	case w.leaderKills > 0 && w.nodes < 3:
		return fmt.Errorf("--leader-kills needs --nodes 3 or more: a one-node cluster has no other node to lead")
	}
	return nil
}

// watchedPerBlock is how many of a block's transactions pay watched
// addresses: the share, rounded, and at least one, since the last of
// them is also the mempool probe.
func (w watchConfig) watchedPerBlock() int {
	return min(w.blockTxs, max(1, int(math.Round(float64(w.blockTxs)*w.watchedShare))))
}
