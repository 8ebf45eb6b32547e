package electrum

import (
	"bytes"
	"context"
	"encoding/hex"
	"slices"
	"sync"
	"time"

	"github.com/addrwatch/addrwatch/chain"
	"github.com/btcsuite/btcd/wire"
	lru "github.com/hashicorp/golang-lru/v2"
)

// Block headers: Electrum names a confirmed transaction's block by its
// height alone, so its hash and time come from the header at that
// height (blockchain.block.header, or blockchain.block.headers for a
// run of heights).

const (
	// headerHexLen is one 80-byte header in hex.
	headerHexLen = 2 * wire.MaxBlockHeaderPayload
	// headersPerRequestMax is the most headers one
	// blockchain.block.headers asks for: what servers send at most
	// (the protocol recommends 2016, electrs and ElectrumX send that).
	headersPerRequestMax = 2016
	// headerGapMax is the most unwanted headers a run may carry between
	// two wanted ones: 24 headers (under 4 KB of hex) cost less than
	// another round trip.
	headerGapMax = 24
	// headerReorgDepth is how far below the tip a header is kept by
	// height: a reorganisation deeper than a hundred blocks (the
	// coinbase maturity) is not expected on any network, while one of a
	// few blocks is ordinary, so headers nearer the tip are always asked
	// again.
	headerReorgDepth = 100
	// headersKeptMax bounds the headers kept.
	headersKeptMax = 20_000
)

// header is what the source reads of a block header.
type header struct {
	height int64
	hash   string
	prev   string
	time   time.Time
}

func (h header) ref() chain.BlockRef { return chain.BlockRef{Height: h.height, Hash: h.hash} }

// parseHeader decodes one header in hex.
func parseHeader(height int64, hexHeader string) (header, error) {
	if len(hexHeader) != headerHexLen {
		return header{}, unusablef("a block header of %d hex characters", len(hexHeader))
	}
	raw, err := hex.DecodeString(hexHeader)
	if err != nil {
		return header{}, unusablef("a block header that is not hex")
	}
	var bh wire.BlockHeader
	if err := bh.Deserialize(bytes.NewReader(raw)); err != nil {
		return header{}, unusablef("a block header that does not decode")
	}
	return header{height: height, hash: bh.BlockHash().String(), prev: bh.PrevBlock.String(), time: bh.Timestamp.UTC()}, nil
}

// wireTip is blockchain.headers.subscribe's answer, and its
// notification's param.
type wireTip struct {
	Height int64  `json:"height"`
	Hex    string `json:"hex"`
}

func (t wireTip) header() (header, error) {
	if t.Height < 0 {
		return header{}, unusablef("a tip at a negative height")
	}
	return parseHeader(t.Height, t.Hex)
}

// wireHeaders is blockchain.block.headers' answer.
type wireHeaders struct {
	Count int    `json:"count"`
	Hex   string `json:"hex"`
}

// headerCache keeps headers by height, only those headerReorgDepth or
// more below the newest tip seen; and forgets them all when a tip shows
// the chain went another way than what it holds.
type headerCache struct {
	mu       sync.Mutex
	tip      header
	byHeight *lru.Cache[int64, header]
}

func newHeaderCache() *headerCache {
	byHeight, _ := lru.New[int64, header](headersKeptMax)
	return &headerCache{byHeight: byHeight}
}

// sawTip takes in a tip the server told. A tip lower than the one known,
// or another block at its height, is a reorganisation: whatever is kept
// may be off the chain now, so all of it is forgotten.
func (c *headerCache) sawTip(h header) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if h.height < c.tip.height || (h.height == c.tip.height && h.hash != c.tip.hash) {
		c.byHeight.Purge()
	}
	if kept, ok := c.byHeight.Peek(h.height - 1); ok && kept.hash != h.prev {
		c.byHeight.Purge()
	}
	c.tip = h
}

func (c *headerCache) get(height int64) (header, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.byHeight.Get(height)
}

func (c *headerCache) keep(h header) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if h.height <= c.tip.height-headerReorgDepth {
		c.byHeight.Add(h.height, h)
	}
}

// headersAt is the header at each of heights, from the cache or the
// server: consecutive heights (with gaps of at most headerGapMax) in one
// blockchain.block.headers request, the runs asked at once.
func (s *Source) headersAt(ctx context.Context, heights []int64) (map[int64]header, error) {
	out := make(map[int64]header, len(heights))
	var missing []int64
	for _, h := range heights {
		if hd, ok := s.headers.get(h); ok {
			out[h] = hd
		} else if h >= 0 {
			missing = append(missing, h)
		}
	}
	slices.Sort(missing)
	missing = slices.Compact(missing)
	runs := headerRuns(missing)
	got := make([][]header, len(runs))
	err := forEach(ctx, len(runs), func(ctx context.Context, i int) (err error) {
		got[i], err = s.headerRun(ctx, runs[i][0], runs[i][1])
		return err
	})
	if err != nil {
		return nil, err
	}
	for _, run := range got {
		for _, hd := range run {
			s.headers.keep(hd)
			out[hd.height] = hd
		}
	}
	return out, nil
}

// headerRuns groups sorted heights into runs [first, last] of at most
// headersPerRequestMax heights, a new run starting after a gap of more
// than headerGapMax.
func headerRuns(heights []int64) [][2]int64 {
	var runs [][2]int64
	for _, h := range heights {
		if n := len(runs); n > 0 && h-runs[n-1][1] <= headerGapMax+1 && h-runs[n-1][0] < headersPerRequestMax {
			runs[n-1][1] = h
			continue
		}
		runs = append(runs, [2]int64{h, h})
	}
	return runs
}

// headerRun asks the headers first..last: blockchain.block.header for
// one, blockchain.block.headers for more, which must chain each to the
// one before.
func (s *Source) headerRun(ctx context.Context, first, last int64) ([]header, error) {
	if first == last {
		var hexHeader string
		if err := s.call(ctx, "blockchain.block.header", []any{first}, &hexHeader); err != nil {
			return nil, err
		}
		h, err := parseHeader(first, hexHeader)
		return []header{h}, err
	}
	count := last - first + 1
	var w wireHeaders
	if err := s.call(ctx, "blockchain.block.headers", []any{first, count}, &w); err != nil {
		return nil, err
	}
	if int64(w.Count) != count || len(w.Hex) != int(count)*headerHexLen {
		return nil, unusablef("blockchain.block.headers answered %d headers of %d asked for", w.Count, count)
	}
	run := make([]header, count)
	for i := range run {
		h, err := parseHeader(first+int64(i), w.Hex[i*headerHexLen:(i+1)*headerHexLen])
		if err != nil {
			return nil, err
		}
		if i > 0 && h.prev != run[i-1].hash {
			return nil, unusablef("blockchain.block.headers answered headers that do not chain")
		}
		run[i] = h
	}
	return run, nil
}
