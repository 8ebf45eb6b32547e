package chain

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// Every source the server can be given is a Source.
var (
	_ Source = (*Client)(nil)
	_ Source = (*guarded)(nil)
)

// The sim's tip is the block its clock has reached, by the hash its
// transactions' statuses name, and it moves on with the clock.
func TestSimTipIsTheBlockItsClockReached(t *testing.T) {
	now := time.Unix(simGenesisUnix+1000*simBlockSeconds+30, 0)
	c, _ := simClient(t, now)
	tip, err := c.Tip(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if want := (BlockRef{Height: 1000, Hash: simBlockHash(1000)}); tip != want {
		t.Errorf("tip %+v, want %+v", tip, want)
	}
	later, _ := simClient(t, now.Add(simBlockSeconds*time.Second))
	if tip, err := later.Tip(context.Background()); err != nil || tip.Height != 1001 {
		t.Errorf("ten minutes later the tip is %+v (%v), want height 1001", tip, err)
	}
}

// An explorer's /blocks that is empty or names no proper block is a
// failure of the source, never a tip.
func TestATipThatIsNoBlockIsAnUpstreamFailure(t *testing.T) {
	for _, body := range []string{`[]`, `[{"id":"nothex","height":5}]`, `[{"id":"` + fakeHash + `","height":-1}]`, `{}`} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(body))
		}))
		c, err := NewClient(srv.URL, ClientOptions{Retries: -1})
		if err != nil {
			t.Fatal(err)
		}
		if tip, err := c.Tip(context.Background()); !errors.Is(err, ErrUpstream) {
			t.Errorf("/blocks %s: tip %+v, %v; want an upstream failure", body, tip, err)
		}
		srv.Close()
	}
}

const fakeHash = "00000000000000000001b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2"

// failingSource fails every call as a source that is down does, and
// counts them.
type failingSource struct{ calls int }

func (f *failingSource) fail(op string) error {
	f.calls++
	return &UpstreamError{Op: op, Status: http.StatusBadGateway, Err: errors.New("down")}
}

func (f *failingSource) AddressStats(context.Context, string) (AddressStats, error) {
	return AddressStats{}, f.fail("address")
}
func (f *failingSource) ChainTxs(context.Context, string, string) ([]Tx, error) {
	return nil, f.fail("chain txs")
}
func (f *failingSource) MempoolTxs(context.Context, string) ([]Tx, error) {
	return nil, f.fail("mempool txs")
}
func (f *failingSource) Tx(context.Context, string) (Tx, error) { return Tx{}, f.fail("tx") }
func (f *failingSource) Tip(context.Context) (BlockRef, error)  { return BlockRef{}, f.fail("tip") }
func (f *failingSource) BlockHash(context.Context, int64) (string, error) {
	return "", f.fail("block hash")
}

// genesisSource is a source whose chain starts with genesis.
type genesisSource struct {
	failingSource
	genesis string
}

func (g *genesisSource) BlockHash(_ context.Context, height int64) (string, error) {
	if height != 0 {
		return "", ErrNotFound
	}
	return g.genesis, nil
}

// The sim is a mainnet chain.
func TestTheSimIsOnMainnet(t *testing.T) {
	c, _ := simClient(t, time.Unix(simGenesisUnix+1000*simBlockSeconds, 0))
	if err := CheckNetwork(context.Background(), c, Mainnet); err != nil {
		t.Error(err)
	}
	if err := CheckNetwork(context.Background(), c, Testnet); !errors.Is(err, ErrWrongNetwork) {
		t.Errorf("the sim on testnet: %v", err)
	}
}

// A source is taken only on the network whose genesis block it has.
func TestCheckNetworkRefusesASourceOnAnotherChain(t *testing.T) {
	regtest := &genesisSource{genesis: Regtest.Params().GenesisHash.String()}
	if err := CheckNetwork(context.Background(), regtest, Regtest); err != nil {
		t.Errorf("a regtest source on regtest: %v", err)
	}
	for _, n := range []Network{Mainnet, Testnet, Signet} {
		if err := CheckNetwork(context.Background(), regtest, n); !errors.Is(err, ErrWrongNetwork) {
			t.Errorf("a regtest source on %s: %v, want ErrWrongNetwork", n, err)
		}
	}
	if err := CheckNetwork(context.Background(), &failingSource{}, Mainnet); err == nil || errors.Is(err, ErrWrongNetwork) {
		t.Errorf("a source that does not answer: %v, want its failure", err)
	}
}

// The sim answers a block's hash by its height up to its tip, the hash
// its transactions' statuses name, and nothing above it.
func TestSimBlockHashes(t *testing.T) {
	c, _ := simClient(t, time.Unix(simGenesisUnix+1000*simBlockSeconds, 0))
	for _, h := range []int64{0, 999, 1000} {
		if got, err := c.BlockHash(context.Background(), h); err != nil || got != simBlockHash(h) {
			t.Errorf("block %d: %q, %v", h, got, err)
		}
	}
	if got, err := c.BlockHash(context.Background(), 1001); !errors.Is(err, ErrNotFound) {
		t.Errorf("above the tip: %q, %v; want ErrNotFound", got, err)
	}
}

// A guarded source opens its breaker as a Client does: once several
// accounts' addresses found it down, the next call fails at once, with
// when to come back, and the source is not asked.
func TestAGuardedSourceOpensItsBreakerAsAClientDoes(t *testing.T) {
	src := &failingSource{}
	g := Guard(src, 3, time.Minute)
	for i, addr := range []string{fakeAddr, badAddr, "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq"} {
		_, _ = g.AddressStats(WithAccount(context.Background(), []string{"a", "b", "c"}[i]), addr)
	}
	asked := src.calls
	_, err := g.MempoolTxs(WithAccount(context.Background(), "d"), "bc1q9vza2e8x573nczrlzms0wvx3gsqjx7vavgkx0l")
	var ue *UpstreamError
	if !errors.As(err, &ue) || !errors.Is(err, ErrCircuitOpen) || ue.RetryAfter <= 0 {
		t.Fatalf("after three accounts' addresses failed: %v, want the open circuit with a RetryAfter", err)
	}
	if src.calls != asked {
		t.Error("the open breaker asked the source")
	}
	if Guard(src, -1, 0) != Source(src) {
		t.Error("Guard with failures < 0 did not give the source as it is")
	}
}

// notifyingSource is a failing source that notifies.
type notifyingSource struct{ failingSource }

func (*notifyingSource) Notify(context.Context) (<-chan Change, error) { return nil, nil }
func (*notifyingSource) Watch(context.Context, []string) error         { return nil }

// A guarded source that notifies still does: the follower finds out by
// asking the source it was given.
func TestAGuardedNotifierStillNotifies(t *testing.T) {
	if _, notifies := Guard(&notifyingSource{}, 3, time.Minute).(Notifier); !notifies {
		t.Error("Guard hid the source's notifications")
	}
	if _, notifies := Guard(&failingSource{}, 3, time.Minute).(Notifier); notifies {
		t.Error("Guard made up notifications")
	}
}
