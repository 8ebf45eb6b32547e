package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/addrwatch/addrwatch/actors"
)

// What running G groups costs (SCALE.md, "What the prototype costs"): three
// nodes in this process over loopback, like TestShardedGroupsFailOverOnTheirOwn.
// Each figure is for the whole process, so for all three nodes together;
// the process shares the machine's cores with nothing else the benchmark
// runs. Run with -benchtime 1x: each benchmark runs for a set time
// (ADDRWATCH_SHARD_BENCH_SECONDS, default 10) whatever b.N is.
//
//	go test ./cluster -run '^$' -bench 'Sharded' -benchtime 1x

func shardBenchDuration(b *testing.B) time.Duration {
	s := os.Getenv("ADDRWATCH_SHARD_BENCH_SECONDS")
	if s == "" {
		return 10 * time.Second
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		b.Fatalf("ADDRWATCH_SHARD_BENCH_SECONDS=%q is not a count of seconds", s)
	}
	return time.Duration(n) * time.Second
}

// cpuTime is the CPU the process has used, user and system.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func heapInUse() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// BenchmarkShardedIdleCost: CPU, heap and goroutines of three nodes that
// run G groups and do nothing (heartbeats, checkpoints, version polls).
func BenchmarkShardedIdleCost(b *testing.B) {
	for _, groups := range []int{1, 4, 16} {
		b.Run(fmt.Sprintf("groups=%d", groups), func(b *testing.B) {
			idle := shardBenchDuration(b)
			heapBefore, goBefore := heapInUse(), runtime.NumGoroutine()
			c := startSharded(b, groups)
			c.spreadLeaders()
			time.Sleep(2 * time.Second) // let the start's elections and transfers settle
			cpu := cpuTime(b)
			time.Sleep(idle)
			used := cpuTime(b) - cpu
			b.ReportMetric(float64(used)/float64(time.Millisecond)/idle.Seconds(), "cpu-ms/s")
			b.ReportMetric(float64(heapInUse()-heapBefore)/(1<<20), "heap-MiB")
			b.ReportMetric(float64(runtime.NumGoroutine()-goBefore), "goroutines")
		})
	}
}

// BenchmarkShardedDurableWrites: card updates per second through G groups
// of three nodes, with the groups' leaders spread over the nodes. Each of
// 64 writers owns an account and updates its one card in turn, so no write
// is ever refused; each write is acknowledged once a quorum of its group
// has it on disk.
func BenchmarkShardedDurableWrites(b *testing.B) {
	for _, groups := range []int{1, 2, 4} {
		b.Run(fmt.Sprintf("groups=%d", groups), func(b *testing.B) {
			run := shardBenchDuration(b)
			c := startSharded(b, groups)
			c.spreadLeaders()
			const writers = 64
			versions := make([]string, writers)
			for w := range writers {
				account := fmt.Sprintf("writer-%02d", w)
				mustSucceed(b, c.propose(createAccount(account)), 201)
				res := c.propose(createCard(account, "card", addresses[0], t0))
				mustSucceed(b, res, 201)
				versions[w] = res.Body.(actors.CardEnvelope).Card.Version
			}
			var writes atomic.Int64
			var failed atomic.Value
			ctx, cancel := context.WithTimeout(context.Background(), run)
			defer cancel()
			cpu, proposedBefore := cpuTime(b), c.proposed()
			start := time.Now()
			var wg sync.WaitGroup
			for w := range writers {
				wg.Go(func() {
					if err := c.writeLoop(ctx, fmt.Sprintf("writer-%02d", w), versions[w], &writes); err != nil {
						failed.Store(err)
						cancel()
					}
				})
			}
			wg.Wait()
			elapsed, used := time.Since(start), cpuTime(b)-cpu
			if err, _ := failed.Load().(error); err != nil {
				b.Fatal(err)
			}
			n, proposed := writes.Load(), c.proposed()
			b.ReportMetric(float64(n)/elapsed.Seconds(), "writes/s")
			b.ReportMetric(float64(used.Microseconds())/float64(n), "cpu-us/write")
			b.ReportMetric(float64(proposed.CommandsProposed-proposedBefore.CommandsProposed)/
				float64(proposed.EntriesProposed-proposedBefore.EntriesProposed), "commands/entry")
		})
	}
}

// proposed sums what every group's leaders have proposed.
func (c *shardedCluster) proposed() WriteStats {
	var sum WriteStats
	for _, m := range c.running() {
		for g := range c.count {
			st := m.groups.Group(g).metrics.stats()
			sum.EntriesProposed += st.EntriesProposed
			sum.CommandsProposed += st.CommandsProposed
		}
	}
	return sum
}

// writeLoop updates account's card until ctx ends, from the member that
// leads its group (found again after a leadership change).
func (c *shardedCluster) writeLoop(ctx context.Context, account, version string, writes *atomic.Int64) error {
	var leader *shardedMember
	for i := 0; ; i++ {
		if ctx.Err() != nil {
			return nil
		}
		if leader == nil {
			g, err := c.members[0].groups.GroupOf(account)
			if err != nil {
				return err
			}
			leader = c.awaitLeader(g)
		}
		name := fmt.Sprintf("write %d", i)
		res, err := leader.groups.Propose(ctx, &actors.Command{Account: account, At: t0 + int64(i), Principal: ownerPrincipal,
			Payload: &actors.UpdatePortfolioCard{CardID: "card", ExpectedVersion: version, CardFields: actors.CardFields{Name: &name}}})
		switch {
		case errors.Is(err, ErrNotLeader):
			leader = nil
			continue
		case ctx.Err() != nil:
			return nil
		case err != nil:
			return fmt.Errorf("%s: write %d: %w", account, i, err)
		}
		version = res.Body.(actors.CardEnvelope).Card.Version
		writes.Add(1)
	}
}
