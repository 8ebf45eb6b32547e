package electrum

import (
	"context"
	"sync"
)

// fanOutMax bounds the requests one call of the source has in flight at
// once (the connection bounds them all together: inFlightMax).
const fanOutMax = 16

// forEach runs task(i) for i in [0, n), at most fanOutMax at once, and
// returns the first error, after which the tasks not yet started are
// not started and the context of those running is cancelled.
func forEach(ctx context.Context, n int, task func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	slots := make(chan struct{}, fanOutMax)
	for i := range n {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		go func() {
			defer func() { <-slots; wg.Done() }()
			if err := task(ctx, i); err != nil {
				mu.Lock()
				if first == nil {
					first = err
				}
				mu.Unlock()
				cancel()
			}
		}()
	}
	wg.Wait()
	if first == nil {
		first = ctx.Err()
	}
	return first
}
