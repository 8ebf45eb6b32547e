// Package btcdsource is a chain.Source over the JSON-RPC of the owner's
// own btcd, run with --addrindex and --txindex (--chain
// btcd:https://USER:PASS@HOST:PORT, with --chain-cert for btcd's own
// certificate and --chain-proxy for Tor). It answers in Esplora's terms,
// as chain.Client does, so History, its windows, its ceiling and its
// degraded answers work the same over it.
//
// btcd keeps no per-address counters and pages an address's history by
// position, not after a transaction, so the source keeps a small index
// per address (the confirmed transaction IDs in btcd's order and the
// lifetime sums) and reads only what was added since its last read.
// Its requests share one websocket connection to btcd, answered by ID,
// rather than each paying for a connection of its own.
// It is also a chain.Notifier over btcd's websocket notifications
// (notifyblocks, and loadtxfilter with the watched addresses and their
// unspent outputs), so the follower reads only what each block or
// mempool transaction touched. DESIGN.md explains the mapping onto
// btcd's methods, what each call costs in requests, the bounds, and
// where btcd's answers differ from an Esplora's.
package btcdsource
