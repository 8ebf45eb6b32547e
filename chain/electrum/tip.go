package electrum

import (
	"context"
	"fmt"

	"github.com/addrwatch/addrwatch/chain"
)

// Tip is blockchain.headers.subscribe: the server's tip, its height and
// its header (whose hash is the block's). One request; the connection is
// subscribed to new tips already, so asking again adds nothing else.
func (s *Source) Tip(ctx context.Context) (chain.BlockRef, error) {
	h, err := s.tip(ctx)
	if err != nil {
		return chain.BlockRef{}, upstream("tip", err)
	}
	return h.ref(), nil
}

// tip asks the server's tip, and takes it in.
func (s *Source) tip(ctx context.Context) (header, error) {
	var w wireTip
	if err := s.call(ctx, "blockchain.headers.subscribe", nil, &w); err != nil {
		return header{}, err
	}
	h, err := w.header()
	if err != nil {
		return header{}, err
	}
	if ss, err := s.session(ctx); err == nil {
		ss.sawTip(h)
	}
	s.headers.sawTip(h)
	return h, nil
}

// BlockHash is the hash of the block at height on the server's chain:
// height 0 is server.features' genesis_hash, told at the handshake (so
// chain.CheckNetwork costs no request, and names the server's network
// even when it is another than the source's); any other is the header
// at height (blockchain.block.header), chain.ErrNotFound above the tip.
func (s *Source) BlockHash(ctx context.Context, height int64) (string, error) {
	const op = "block hash"
	if height < 0 {
		return "", fmt.Errorf("%w: a height is not negative", chain.ErrInvalidArgument)
	}
	if height == 0 {
		ss, err := s.session(ctx)
		if err != nil {
			return "", upstream(op, err)
		}
		return ss.genesis, nil
	}
	hash, err := s.blockHash(ctx, height)
	return hash, upstream(op, err)
}

func (s *Source) blockHash(ctx context.Context, height int64) (string, error) {
	ss, err := s.session(ctx)
	if err != nil {
		return "", err
	}
	if height > ss.newestTip().height {
		tip, err := s.tip(ctx)
		if err != nil {
			return "", err
		}
		if height > tip.height {
			return "", chain.ErrNotFound
		}
	}
	headers, err := s.headersAt(ctx, []int64{height})
	if _, refused := rpcErrorOf(err); refused {
		// Servers refuse a height above their tip (electrs: "no header
		// at", ElectrumX: "out of range"): the tip may have gone down.
		if tip, tipErr := s.tip(ctx); tipErr == nil && height > tip.height {
			return "", chain.ErrNotFound
		}
	}
	if err != nil {
		return "", err
	}
	return headers[height].hash, nil
}
