package actors

import (
	"bytes"
	"cmp"
	"encoding/json"
	"slices"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// IdempotencyRecords are an account's replay records: one queue per
// principal, so that one principal's writes can never push another's
// records out (spec Idempotency rule 4: tokens are separate per API key).
// Every record stays for its 24 hours (rule 2); a principal's queue is
// bounded by what the spec's limits let one key write in that time
// (idempotencyRecordsPerPrincipalMax), and only that principal's own
// oldest record makes room when it is full.
//
// Records keep their apply order across queues (seq), because expiry
// drops the oldest records of the account in apply order, and because
// log entries written before per-principal queues still evict the
// account's oldest record when it holds idempotencyRecordsBefore13Max.
// Snapshots keep the encoding those entries' state had: one list of
// records in apply order, each naming its principal.
type IdempotencyRecords struct {
	queues  []*replayQueue // one per principal holding records
	count   int            // records in all queues
	nextSeq uint64         // apply-order number of the next record
}

// replayQueue is one principal's records, oldest first, with the newest
// record of each token for lookups.
type replayQueue struct {
	principal string
	records   []*IdempotencyRecord
	byToken   map[string]*IdempotencyRecord
}

// Len returns the number of records held.
func (rs *IdempotencyRecords) Len() int { return rs.count }

// PrincipalLen returns the number of records one principal holds, named as
// principalKey names it ("owner", "key:<id>").
func (rs *IdempotencyRecords) PrincipalLen(principal string) int {
	if q := rs.queue(principal); q != nil {
		return len(q.records)
	}
	return 0
}

func (rs *IdempotencyRecords) queue(principal string) *replayQueue {
	for _, q := range rs.queues {
		if q.principal == principal {
			return q
		}
	}
	return nil
}

// newest returns the principal's newest record for token, live or not.
func (rs *IdempotencyRecords) newest(principal, token string) *IdempotencyRecord {
	if q := rs.queue(principal); q != nil {
		return q.byToken[token]
	}
	return nil
}

// add appends r (whose Principal is set) as the newest record.
func (rs *IdempotencyRecords) add(r *IdempotencyRecord) {
	q := rs.queue(r.Principal)
	if q == nil {
		q = &replayQueue{principal: r.Principal, byToken: map[string]*IdempotencyRecord{}}
		rs.queues = append(rs.queues, q)
	}
	r.Principal = q.principal // one copy of the name per queue
	r.seq = rs.nextSeq
	rs.nextSeq++
	q.records = append(q.records, r)
	q.byToken[r.Request.Token] = r
	rs.count++
}

// oldest returns the queue that holds the account's oldest record in apply
// order, or nil when there are no records.
func (rs *IdempotencyRecords) oldest() *replayQueue {
	var oldest *replayQueue
	for _, q := range rs.queues {
		if oldest == nil || q.records[0].seq < oldest.records[0].seq {
			oldest = q
		}
	}
	return oldest
}

// dropOldest drops the oldest record of queue q, and q itself once empty.
func (rs *IdempotencyRecords) dropOldest(q *replayQueue) {
	r := q.records[0]
	q.records[0] = nil // the backing array must not keep it alive
	q.records = q.records[1:]
	if q.byToken[r.Request.Token] == r {
		delete(q.byToken, r.Request.Token)
	}
	rs.count--
	if len(q.records) == 0 {
		rs.dropQueue(q)
	}
}

func (rs *IdempotencyRecords) dropQueue(q *replayQueue) {
	rs.count -= len(q.records)
	rs.queues = slices.DeleteFunc(rs.queues, func(x *replayQueue) bool { return x == q })
}

// prune drops the account's expired records, oldest first in apply order,
// up to the first one still live. Leader clocks may step back slightly
// across an election, so a record behind a live one may have expired and
// stay a little longer; lookups check the age of what they find.
func (rs *IdempotencyRecords) prune(cutoff int64) {
	for q := rs.oldest(); q != nil && q.records[0].At <= cutoff; q = rs.oldest() {
		rs.dropOldest(q)
	}
}

// inApplyOrder returns every record, oldest first.
func (rs *IdempotencyRecords) inApplyOrder() []*IdempotencyRecord {
	all := make([]*IdempotencyRecord, 0, rs.count)
	for _, q := range rs.queues {
		all = append(all, q.records...)
	}
	slices.SortFunc(all, func(x, y *IdempotencyRecord) int { return cmp.Compare(x.seq, y.seq) })
	return all
}

// MarshalJSON encodes the records as one list in apply order, the
// encoding snapshots have always had.
func (rs IdempotencyRecords) MarshalJSON() ([]byte, error) { return json.Marshal(rs.inApplyOrder()) }

// UnmarshalJSON decodes a list of records in apply order (also null, as
// an account without records was once encoded).
func (rs *IdempotencyRecords) UnmarshalJSON(data []byte) error {
	return rs.UnmarshalJSONFrom(jsontext.NewDecoder(bytes.NewReader(data)))
}

// UnmarshalJSONFrom is UnmarshalJSON for the v2 decoder package
// persistence reads snapshots with: the records are decoded in the same
// pass as the account around them (a restart is mostly decoding).
func (rs *IdempotencyRecords) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	var all []*IdempotencyRecord
	if err := jsonv2.UnmarshalDecode(dec, &all); err != nil {
		return err
	}
	rs.restore(all)
	return nil
}

// restore replaces the records with all, in apply order. Each queue and
// its index are made at their final size, so that a restart allocates
// once per queue rather than once per growth.
func (rs *IdempotencyRecords) restore(all []*IdempotencyRecord) {
	*rs = IdempotencyRecords{}
	var sizes []int // per queue, in rs.queues order
	for _, r := range all {
		if r == nil {
			continue
		}
		i := slices.IndexFunc(rs.queues, func(q *replayQueue) bool { return q.principal == r.Principal })
		if i < 0 {
			i = len(rs.queues)
			rs.queues = append(rs.queues, &replayQueue{principal: r.Principal})
			sizes = append(sizes, 0)
		}
		sizes[i]++
	}
	for i, q := range rs.queues {
		q.records = make([]*IdempotencyRecord, 0, sizes[i])
		q.byToken = make(map[string]*IdempotencyRecord, sizes[i])
	}
	for _, r := range all {
		if r != nil {
			rs.add(r)
		}
	}
}
