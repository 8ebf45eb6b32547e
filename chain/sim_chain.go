package chain

import (
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"slices"
	"strconv"
	"time"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg"
)

// This file is the simulated chain's world: a pure function of an address
// and the current time. Nothing here is random at run time and nothing is
// stored; every figure is drawn from SHA-256 of a seed, so two processes (or
// two Sim values) show the same history for the same address at the same
// time. HISTORY.md describes the world in prose.

const (
	simGenesisUnix  = 1231006505 // the time of block 0
	simBlockSeconds = 600        // one block every ten minutes, exactly
	simDaySeconds   = 24 * 3600

	// simOwnTxsMax bounds an address's own confirmed transactions, so the
	// history stops growing one day even if the clock runs on for decades.
	simOwnTxsMax = 2000
	// simMempoolTxsMax bounds an address's own mempool transactions.
	simMempoolTxsMax = 3
	// simActiveMeanGapMax keeps an active address's gaps short enough
	// (at most 1.75 times this) that every 365-day window holds activity.
	simActiveMeanGapMax = 45 * simDaySeconds
	// simHubFirstYear is the first year with hub transactions.
	simHubFirstYear = 2015
	// simHubTxsPerYear is how many hub transactions each year holds: one
	// in each half of the year.
	simHubTxsPerYear = 2
)

var (
	simStartMin      = time.Date(2012, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	simStartMax      = time.Date(2022, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	simDormantEndMax = time.Date(2024, 7, 1, 0, 0, 0, 0, time.UTC).Unix()
	// simReferenceEnd is the date by which an active address has made about
	// its target number (40 to 400) of transactions.
	simReferenceEnd = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
)

// simHubs are the well-known addresses that share the hub transactions.
// They are never dormant. The order matters: the first two are in every
// first-half-year hub transaction and the mempool hub transaction.
var simHubs = []string{
	"1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa",
	"bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq",
	"bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4",
	"3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy",
	"bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqzk5jj0",
}

// simHubMempoolMembers are the hubs paid by the one hub mempool transaction.
var simHubMempoolMembers = []string{simHubs[0], simHubs[1], simHubs[3]}

var simHubSeed = sha256.Sum256([]byte("addrwatch-sim/hubs/v1"))

// simProfile is everything drawn once per address.
type simProfile struct {
	address  string // canonical
	addrType byte
	key      [20]byte
	seed     [32]byte
	hub      bool
	dormant  bool
	start    int64 // unix seconds; the first transaction comes soon after
	end      int64 // dormant only: no transaction after this
	meanGap  int64 // seconds between transactions, on average
	mempool  int   // own mempool transactions, 0 to simMempoolTxsMax
}

// simProfileOf draws the profile of a canonical mainnet address.
func simProfileOf(canonical string) (simProfile, bool) {
	t, key, ok := simAddressKey(canonical)
	if !ok {
		return simProfile{}, false
	}
	p := simProfile{
		address:  canonical,
		addrType: t,
		key:      key,
		seed:     sha256.Sum256([]byte("addrwatch-sim/address/v1|" + canonical)),
		hub:      slices.Contains(simHubs, canonical),
	}
	d := simDraws(p.seed, "profile", 0)
	p.start = simStartMin + int64(d[0]%uint64(simStartMax-simStartMin))
	p.dormant = !p.hub && d[1]%4 == 0
	referenceEnd := simReferenceEnd
	if p.dormant {
		earliest := p.start + 365*simDaySeconds
		p.end = earliest + int64(d[2]%uint64(simDormantEndMax-earliest))
		referenceEnd = p.end
	}
	target := int64(40 + d[3]%361)
	p.meanGap = (referenceEnd - p.start) / target
	if !p.dormant {
		p.meanGap = min(p.meanGap, simActiveMeanGapMax)
		p.mempool = int((d[3] >> 32) % (simMempoolTxsMax + 1))
	}
	return p, true
}

// simOwnTx is one of an address's own confirmed transactions. received:
// a counterparty paid value to the address (and took change); otherwise
// the address spent its whole balance as one input, paid value to a
// counterparty and took change back.
type simOwnTx struct {
	index     int
	height    int64
	blockTime int64
	received  bool
	value     int64
	fee       int64
	change    int64
	spent     int64 // sent only: the input taken from the address
}

// ownTimeline lists the address's own confirmed transactions in the blocks up to now,
// oldest first. The balance is carried along, so the address never spends
// more than it received.
func (p *simProfile) ownTimeline(now int64) []simOwnTx {
	var (
		txs     []simOwnTx
		t       = p.start
		balance int64
	)
	for i := range simOwnTxsMax {
		d := simDraws(p.seed, "tx", i)
		t += p.meanGap * int64(25+d[0]%151) / 100
		height := (t - simGenesisUnix) / simBlockSeconds
		blockTime := simGenesisUnix + height*simBlockSeconds
		// A transaction is shown once its block is the tip, as the hub
		// transactions are: the world changes only when the tip moves,
		// which is what lets the sim notify (SimSource).
		if blockTime > now || (p.dormant && t > p.end) {
			break
		}
		tx := simOwnTx{index: i, height: height, blockTime: blockTime}
		tx.fee = int64(200 + d[3]%5000)
		if i == 0 || balance <= 2*tx.fee || d[1]%10 < 6 {
			tx.received = true
			tx.value = simAmount(d[2])
			tx.change = int64((d[3] >> 32) % 100_000)
			balance += tx.value
		} else {
			tx.spent = balance
			tx.value = (balance - tx.fee) * int64(10+(d[3]>>16)%80) / 100
			tx.change = balance - tx.fee - tx.value
			balance = tx.change
		}
		txs = append(txs, tx)
	}
	return txs
}

func (p *simProfile) ownTxID(kind byte, index int) string {
	return encodeSimTxID(simTxRef{kind: kind, addrType: p.addrType, number: uint16(index), key: p.key}, p.address)
}

func (p *simProfile) ownWire(tx simOwnTx) esploraTx {
	txid := p.ownTxID(simKindOwnConfirmed, tx.index)
	cp := simCounterparty(p.seed, tx.index)
	w := esploraTx{TxID: txid, Status: simConfirmed(tx.height, tx.blockTime), Fee: tx.fee}
	if tx.received {
		w.Vin = []esploraVin{simInput(txid, cp, tx.value+tx.fee+tx.change)}
		w.Vout = []esploraTxOut{{p.address, tx.value}, {cp, tx.change}}
	} else {
		w.Vin = []esploraVin{simInput(txid, p.address, tx.spent)}
		w.Vout = []esploraTxOut{{cp, tx.value}, {p.address, tx.change}}
	}
	return w
}

// mempoolWire is own mempool transaction j: always a payment to the
// address. The sim's mempool transactions never confirm.
func (p *simProfile) mempoolWire(j int) esploraTx {
	d := simDraws(p.seed, "mempool", j)
	txid := p.ownTxID(simKindOwnMempool, j)
	cp := simCounterparty(p.seed, -1-j)
	value, fee, change := simAmount(d[0]), int64(200+d[1]%5000), int64(d[2]%100_000)
	return esploraTx{
		TxID:   txid,
		Status: esploraStatus{Confirmed: false},
		Vin:    []esploraVin{simInput(txid, cp, value+fee+change)},
		Vout:   []esploraTxOut{{p.address, value}, {cp, change}},
		Fee:    fee,
	}
}

// simEntry is one transaction of an address's confirmed listing before it
// is dressed as Esplora JSON: listing, sorting and counting need only the
// txid, the height and the amounts, and building the JSON (addresses
// encoded in bech32) is most of the cost, so only a page's worth is built.
type simEntry struct {
	txid   string
	height int64
	own    simOwnTx
	hub    *simHubTx // nil for the address's own transactions
}

// confirmedEntries is the address's confirmed listing up to now, newest
// first as Esplora orders it: its own transactions, and the hub
// transactions it is part of.
func (p *simProfile) confirmedEntries(now int64) []simEntry {
	own := p.ownTimeline(now)
	out := make([]simEntry, 0, len(own)+8)
	for _, tx := range own {
		out = append(out, simEntry{txid: p.ownTxID(simKindOwnConfirmed, tx.index), height: tx.height, own: tx})
	}
	if p.hub {
		for _, h := range simHubTxsUntil(now) {
			if slices.Contains(h.members, p.address) {
				out = append(out, simEntry{txid: h.txID(), height: h.height, hub: &h})
			}
		}
	}
	slices.SortFunc(out, func(a, b simEntry) int {
		if c := cmp.Compare(b.height, a.height); c != 0 {
			return c
		}
		return cmp.Compare(b.txid, a.txid)
	})
	return out
}

// wire dresses an entry of p's listing as Esplora JSON.
func (p *simProfile) wire(e simEntry) esploraTx {
	if e.hub != nil {
		return e.hub.wire()
	}
	return p.ownWire(e.own)
}

// flows is what an entry pays to and takes from p's address, without
// building it.
func (p *simProfile) flows(e simEntry) (funded, spent int64) {
	switch {
	case e.hub != nil:
		i := slices.Index(e.hub.members, p.address)
		return e.hub.values[i], 0
	case e.own.received:
		return e.own.value, 0
	default:
		return e.own.change, e.own.spent
	}
}

// mempoolWireAll is the address's mempool listing, newest first.
func (p *simProfile) mempoolWireAll() []esploraTx {
	var out []esploraTx
	if slices.Contains(simHubMempoolMembers, p.address) {
		out = append(out, simHubMempoolWire())
	}
	for j := p.mempool - 1; j >= 0; j-- {
		out = append(out, p.mempoolWire(j))
	}
	return out
}

// simHubTx is a transaction that pays several hub addresses at once.
type simHubTx struct {
	year, slot int
	height     int64
	blockTime  int64
	members    []string
	values     []int64
	fee        int64
	change     int64
}

// simHubTxAt is the hub transaction of the given year and slot (0: first
// half of the year, 1: second half).
func simHubTxAt(year, slot int) simHubTx {
	n := year*simHubTxsPerYear + slot
	d := simDraws(simHubSeed, "hub", n)
	halfYear := int64(182 * simDaySeconds)
	t := time.Date(year, 1, 1, 0, 0, 0, 0, time.UTC).Unix() + int64(slot)*halfYear + int64(d[0]%uint64(halfYear))
	h := simHubTx{year: year, slot: slot, height: (t - simGenesisUnix) / simBlockSeconds}
	h.blockTime = simGenesisUnix + h.height*simBlockSeconds
	for i, a := range simHubs {
		picked := d[1]>>i&1 == 1
		if slot == 0 && i < 2 {
			picked = true
		}
		if picked {
			h.members = append(h.members, a)
		}
	}
	if len(h.members) < 2 {
		h.members = []string{simHubs[0], simHubs[2]}
	}
	for i := range h.members {
		h.values = append(h.values, simAmount(simDraws(simHubSeed, "hub-value-"+strconv.Itoa(i), n)[0]))
	}
	h.fee = int64(500 + d[2]%20_000)
	h.change = int64(d[3] % 1_000_000)
	return h
}

// simHubTxsUntil lists the confirmed hub transactions up to now, oldest first.
func simHubTxsUntil(now int64) []simHubTx {
	var out []simHubTx
	lastYear := time.Unix(now, 0).UTC().Year()
	for year := simHubFirstYear; year <= lastYear; year++ {
		for slot := range simHubTxsPerYear {
			if h := simHubTxAt(year, slot); h.blockTime <= now {
				out = append(out, h)
			}
		}
	}
	return out
}

func (h simHubTx) txID() string {
	return encodeSimTxID(simTxRef{kind: simKindHubConfirmed, number: uint16(h.year), hubSlot: byte(h.slot)}, "")
}

func (h simHubTx) wire() esploraTx {
	txid := h.txID()
	funder := simCounterparty(simHubSeed, h.year*simHubTxsPerYear+h.slot)
	total := h.fee + h.change
	w := esploraTx{TxID: txid, Status: simConfirmed(h.height, h.blockTime), Fee: h.fee}
	for i, a := range h.members {
		total += h.values[i]
		w.Vout = append(w.Vout, esploraTxOut{a, h.values[i]})
	}
	w.Vout = append(w.Vout, esploraTxOut{funder, h.change})
	w.Vin = []esploraVin{simInput(txid, funder, total)}
	return w
}

// simHubMempoolWire is the one unconfirmed hub transaction.
func simHubMempoolWire() esploraTx {
	txid := encodeSimTxID(simTxRef{kind: simKindHubMempool}, "")
	funder := simCounterparty(simHubSeed, -1)
	d := simDraws(simHubSeed, "hub-mempool", 0)
	w := esploraTx{TxID: txid, Status: esploraStatus{Confirmed: false}, Fee: 1200}
	total := w.Fee
	for i, a := range simHubMempoolMembers {
		v := simAmount(d[i])
		total += v
		w.Vout = append(w.Vout, esploraTxOut{a, v})
	}
	w.Vin = []esploraVin{simInput(txid, funder, total)}
	return w
}

// simDraws returns four pseudo-random numbers for (seed, label, n).
func simDraws(seed [32]byte, label string, n int) [4]uint64 {
	buf := make([]byte, 0, 32+len(label)+9)
	buf = append(buf, seed[:]...)
	buf = append(buf, label...)
	buf = append(buf, '|')
	buf = binary.BigEndian.AppendUint64(buf, uint64(n))
	sum := sha256.Sum256(buf)
	var d [4]uint64
	for i := range d {
		d[i] = binary.BigEndian.Uint64(sum[8*i:])
	}
	return d
}

// simAmount turns a draw into 1,000 satoshis to about 10 BTC, spread over
// orders of magnitude the way real payments are.
func simAmount(d uint64) int64 {
	v := int64(1+d%999) * 1000
	for range (d >> 32) % 4 {
		v *= 10
	}
	return v
}

// simCounterparty is a made-up P2WPKH address on the other side of a
// transaction. Its own sim history does not show the transaction: only hub
// transactions are shared between listings.
func simCounterparty(seed [32]byte, n int) string {
	d := simDraws(seed, "counterparty", n)
	var prog [20]byte
	for i := range prog {
		prog[i] = byte(d[i/8] >> (8 * (i % 8)))
	}
	a, err := btcutil.NewAddressWitnessPubKeyHash(prog[:], &chaincfg.MainNetParams)
	if err != nil {
		panic("chain: a 20-byte program is always a valid P2WPKH: " + err.Error())
	}
	return a.EncodeAddress()
}

// simInput spends one made-up previous output of value from address.
func simInput(txid, address string, value int64) esploraVin {
	prev := sha256.Sum256([]byte("addrwatch-sim/prevout|" + txid))
	return esploraVin{
		TxID:    hex.EncodeToString(prev[:]),
		Prevout: &esploraTxOut{ScriptPubKeyAddress: address, Value: value},
	}
}

func simConfirmed(height, blockTime int64) esploraStatus {
	hashHex := simBlockHash(height)
	return esploraStatus{Confirmed: true, BlockHeight: &height, BlockHash: &hashHex, BlockTime: &blockTime}
}

// simBlockHash is the hash of the sim's block at height: mainnet's genesis
// block at 0, since the sim is a mainnet chain (CheckNetwork takes it as
// one), and a hash of the height above it.
func simBlockHash(height int64) string {
	if height == 0 {
		return Mainnet.Params().GenesisHash.String()
	}
	hash := sha256.Sum256([]byte("addrwatch-sim/block|" + strconv.FormatInt(height, 10)))
	return hex.EncodeToString(hash[:])
}
