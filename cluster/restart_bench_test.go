package cluster

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/addrwatch/addrwatch/actors"
	"github.com/addrwatch/addrwatch/persistence"
)

// restartAccounts is how many accounts BenchmarkRestartFromSnapshot
// restores; ADDRWATCH_RESTART_ACCOUNTS overrides it for a quicker run.
const restartAccounts = 100_000

// restartAddresses are the ten distinct addresses of each account's cards.
var restartAddresses = []string{
	"1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa",
	"bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4",
	"3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy",
	"bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqzk5jj0",
	"1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2",
	"3Ai1JZ8pdJb2ksieUV8FsxSNVJCpoPi8W6",
	"bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq",
	"1Q1pE5vPGEEMqRcVRMbtBK842Y6Pzo6nK9",
	"1MirQ9bwyQcGVJPwKUgapu5ouK2E2Ey4gX",
	"12MzCDwodF9G1e7jfwLXfR164RNtx4BRVG",
}

// baseAccountWithCards builds, through the rules, a base-plan account
// with an API key and ten Account cards, as an agent would have made it.
func baseAccountWithCards(tb testing.TB, id string) *actors.Account {
	var a *actors.Account
	at := t0
	apply := func(p actors.Principal, payload actors.Payload) {
		at += int64(time.Second)
		var res actors.Result
		a, res = actors.Apply(a, &actors.Command{Account: id, At: at, Principal: p, Payload: payload})
		if _, err := res.Outcome(); err != nil {
			tb.Fatalf("%s: %T: %v", id, payload, err)
		}
	}
	apply(systemPrincipal, createAccount(id).Payload)
	apply(ownerPrincipal, &actors.CreateKey{KeyID: id + "-key", Name: "agent", Capability: actors.LevelWrite, Hash: hashOf("awk." + id)})
	agent := actors.Principal{Kind: actors.PrincipalAgent, KeyID: id + "-key"}
	for i, addr := range restartAddresses {
		apply(agent, &actors.CreatePortfolioCard{CardID: id + "-card-" + strconv.Itoa(i), Address: addr,
			CardFields: actors.CardFields{Name: ptr("Savings " + strconv.Itoa(i)), Note: ptr("watch for deposits")}})
	}
	return a
}

// writeRestartBackup writes n such accounts into a backup file (the
// snapshot format), building them on every core.
func writeRestartBackup(b *testing.B, path string, n int) (size int64) {
	encoded := make([][]byte, n)
	var wg sync.WaitGroup
	workers := runtime.GOMAXPROCS(0)
	for w := range workers {
		wg.Go(func() {
			for i := w; i < n; i += workers {
				e, err := persistence.EncodeAccount(baseAccountWithCards(b, fmt.Sprintf("acct-%06d", i)))
				if err != nil {
					b.Error(err)
					return
				}
				encoded[i] = e
			}
		})
	}
	wg.Wait()
	if b.Failed() {
		b.FailNow()
	}
	return writeAccounts(b, path, encoded)
}

// BenchmarkRestartFromSnapshot measures how long a node whose state is a
// snapshot of 100,000 base-plan accounts (ten Account cards each) takes
// from Open to serving: raft reads and checks the snapshot, the FSM
// decodes every account and spawns its actor, and the node wins its
// election and applies its log. Building the accounts is not timed.
//
//	go test ./cluster -run '^$' -bench RestartFromSnapshot -benchtime 1x
func BenchmarkRestartFromSnapshot(b *testing.B) {
	n := restartAccounts
	if s := os.Getenv("ADDRWATCH_RESTART_ACCOUNTS"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil {
			b.Fatalf("ADDRWATCH_RESTART_ACCOUNTS: %v", err)
		}
	}
	dir := b.TempDir()
	backup := filepath.Join(dir, "backup.awsnap")
	size := writeRestartBackup(b, backup, n)
	data, addr := filepath.Join(dir, "node"), freeRaftAddr(b)
	first := startNode(b, data, addr)
	if err := first.node.RestoreFile(backup); err != nil {
		b.Fatalf("RestoreFile: %v", err)
	}
	first.close()
	os.Remove(backup)

	var elapsed time.Duration
	for b.Loop() {
		start := time.Now()
		tn := startNode(b, data, addr)
		elapsed = time.Since(start)
		if got := tn.accounts.Len(); got != n {
			b.Fatalf("restarted with %d accounts, want %d", got, n)
		}
		tn.close()
	}
	b.ReportMetric(elapsed.Seconds(), "s/restart")
	b.ReportMetric(float64(n), "accounts")
	b.ReportMetric(float64(size)/(1<<20), "snapshot-MiB")
}
