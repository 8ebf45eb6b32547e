package esploratest

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"

	"github.com/addrwatch/addrwatch/chain"
)

// blocksListed is how many blocks GET /blocks lists, as Esplora does.
const blocksListed = 10

func (s *Server) routes() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /address/{addr}", s.address)
	mux.HandleFunc("GET /address/{addr}/txs/chain", s.chainTxs)
	mux.HandleFunc("GET /address/{addr}/txs/chain/{last}", s.chainTxs)
	mux.HandleFunc("GET /address/{addr}/txs/mempool", s.mempoolTxs)
	mux.HandleFunc("GET /tx/{txid}", s.tx)
	mux.HandleFunc("GET /blocks", s.blocks)
	mux.HandleFunc("GET /block-height/{height}", s.blockHeight)
	return mux
}

func (s *Server) address(w http.ResponseWriter, r *http.Request) {
	st, err := s.src.AddressStats(r.Context(), r.PathValue("addr"))
	if err != nil {
		fail(w, err)
		return
	}
	writeJSON(w, addressOf(st))
}

// chainTxs is a page of confirmed transactions, after last_seen when the
// path names one (an empty page when it is not of the address's
// history, as electrs answers).
func (s *Server) chainTxs(w http.ResponseWriter, r *http.Request) {
	txs, err := s.src.ChainTxs(r.Context(), r.PathValue("addr"), r.PathValue("last"))
	if err != nil {
		fail(w, err)
		return
	}
	writeJSON(w, txsOf(txs))
}

func (s *Server) mempoolTxs(w http.ResponseWriter, r *http.Request) {
	txs, err := s.src.MempoolTxs(r.Context(), r.PathValue("addr"))
	if err != nil {
		fail(w, err)
		return
	}
	writeJSON(w, txsOf(txs))
}

func (s *Server) tx(w http.ResponseWriter, r *http.Request) {
	t, err := s.src.Tx(r.Context(), r.PathValue("txid"))
	if err != nil {
		fail(w, err)
		return
	}
	writeJSON(w, txOf(t))
}

// blocks lists the tip and the blocks below it, newest first. The tip
// and the hashes below are asked apart, so a reorganisation meanwhile
// may mix two branches: a client takes the first as the tip, and the
// tip is one answer.
func (s *Server) blocks(w http.ResponseWriter, r *http.Request) {
	list, err := s.newestBlocks(r.Context())
	if err != nil {
		fail(w, err)
		return
	}
	writeJSON(w, list)
}

func (s *Server) newestBlocks(ctx context.Context) ([]blockJSON, error) {
	tip, err := s.src.Tip(ctx)
	if err != nil {
		return nil, err
	}
	list := []blockJSON{{ID: tip.Hash, Height: tip.Height}}
	for h := tip.Height - 1; h >= 0 && h > tip.Height-blocksListed; h-- {
		hash, err := s.src.BlockHash(ctx, h)
		if err != nil {
			return nil, err
		}
		list = append(list, blockJSON{ID: hash, Height: h})
	}
	return list, nil
}

// blockHeight is the hash of the block at a height, as text.
func (s *Server) blockHeight(w http.ResponseWriter, r *http.Request) {
	height, err := strconv.ParseInt(r.PathValue("height"), 10, 64)
	if err != nil || height < 0 {
		http.Error(w, "Invalid block height", http.StatusBadRequest)
		return
	}
	hash, err := s.src.BlockHash(r.Context(), height)
	if err != nil {
		fail(w, err)
		return
	}
	w.Header().Set("Content-Type", "text/plain")
	_, _ = io.WriteString(w, hash)
}

// fail answers a Source's error with the status Esplora gives such a
// failure, in plain text: 404 for what it does not know (a transaction,
// a block above the tip), 400 for what cannot be asked (an invalid
// address or ID) or what is wrong with this one address's data (a
// history over the source's bound), and 503 when the node behind it
// failed, which a client retries and counts against the server.
func fail(w http.ResponseWriter, err error) {
	switch {
	case errors.Is(err, chain.ErrNotFound):
		http.Error(w, "Not found", http.StatusNotFound)
	case errors.Is(err, chain.ErrInvalidArgument), errors.Is(err, chain.ErrMalformed):
		http.Error(w, "Invalid request", http.StatusBadRequest)
	default:
		http.Error(w, "The node is unavailable", http.StatusServiceUnavailable)
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	// The values are made here and always encode; a failed write means
	// the client went away.
	_ = json.NewEncoder(w).Encode(v)
}
