package chain

import (
	"context"
	"time"
)

// SimTipEvery is how often a SimSource looks at its clock for a new block.
const SimTipEvery = time.Second

// SimSource is the sim as the chain follower reads it: the ordinary
// Client over the sim's handler, and a Notifier. The sim's world changes
// only when its tip moves (a transaction shows once its block is the tip,
// the mempool never changes), so it can say exactly when to look: at
// every new block, every address may have changed. Without it, the
// follower of a node started with the defaults would read every watched
// address of the sim every few seconds for nothing, and every agent's
// read would pay for that CPU.
type SimSource struct {
	*Client
	sim *Sim
}

// NewSimSource is the source over sim, read as opts say.
func NewSimSource(sim *Sim, opts ClientOptions) *SimSource {
	return &SimSource{Client: NewHandlerClient(sim, opts), sim: sim}
}

// Notify sends a Change naming every address (All) at each new block of
// the sim's clock, looked at every SimTipEvery, until ctx ends.
func (s *SimSource) Notify(ctx context.Context) (<-chan Change, error) {
	changes := make(chan Change, 1)
	go func() {
		defer close(changes)
		tick := time.NewTicker(SimTipEvery)
		defer tick.Stop()
		last := s.sim.tipHeight()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			h := s.sim.tipHeight()
			if h == last {
				continue
			}
			last = h
			select {
			case changes <- Change{Tip: BlockRef{Height: h, Hash: simBlockHash(h)}, All: true}:
			case <-ctx.Done():
				return
			}
		}
	}()
	return changes, nil
}

// Watch does nothing: the sim knows every address already, and a new
// block may change any of them.
func (s *SimSource) Watch(context.Context, []string) error { return nil }

// tipHeight is the height of the sim's newest block at its clock's now.
func (s *Sim) tipHeight() int64 {
	return (s.now().Unix() - simGenesisUnix) / simBlockSeconds
}
