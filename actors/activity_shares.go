package actors

import "strings"

// Which activity lines an account keeps (RecordKeyActivity). The record is
// bounded, and the bound must not be a tool for an agent: a key that
// floods the record with reads must not push out what it changed, nor
// what other keys did. So:
//
//   - Each key holds at most activityKeyEntriesMax lines, its share: 500,
//     so up to four keys active within the week keep their newest 500
//     lines each and never touch each other's.
//   - The account holds at most activityEntriesMax (2,000) lines. When more
//     keys hold more than that together, they are levelled: the key
//     holding the most gives up lines first, so a key holding no more than
//     an even share of 2,000 never loses a line to another key's requests.
//   - A key that must give up lines gives up its reads and refusals first,
//     then its refused writes, and its changes last, each oldest first: a
//     key's own reads never push out one of its changes.
//   - Lines older than 7 days go, whoever's.
//
// Everything here is a function of the account and the command's time, in
// the order of the account's slices, so every replica keeps the same.

// activityKeyEntriesMax is one key's share of the account's lines.
const activityKeyEntriesMax = 500

// Tiers of lines, in the order eviction spares them.
const (
	activityTierRead          = iota // reads, refusals, unknown resources, other requests
	activityTierRefusedChange        // a write the API refused
	activityTierChange               // a write the API made: a change
	activityTiersCount
)

// ActivityIsChange reports whether a line of op answered with status is a
// change the key made: a write the API accepted (or, for the line that
// counts a window's overflow of changes, ActivityOtherChanges).
func ActivityIsChange(op string, status int) bool {
	return op == ActivityOtherChanges || activityWrites(op) && status >= 200 && status < 400
}

// activityWrites reports whether op (method and route) asks for a change.
func activityWrites(op string) bool {
	method, _, _ := strings.Cut(op, " ")
	switch method {
	case "POST", "PUT", "PATCH", "DELETE":
		return true
	}
	return false
}

func (e ActivityEntry) tier() int {
	switch {
	case ActivityIsChange(e.Op, e.Status):
		return activityTierChange
	case activityWrites(e.Op):
		return activityTierRefusedChange
	}
	return activityTierRead
}

// keepActivityShares drops the lines older than 7 days at the command's
// time at, then, per key, the lines beyond what its share lets it keep.
func (a *Account) keepActivityShares(at int64) {
	cutoff := at - int64(activityAgeMax)
	// keys lists each key once, in the order of its oldest line: held is
	// only looked up, never ranged over, so map order decides nothing.
	held := map[string]int{}
	var keys []string
	aged := false
	for _, e := range a.Activity {
		if e.Last <= cutoff {
			aged = true
			continue
		}
		if _, seen := held[e.KeyID]; !seen {
			keys = append(keys, e.KeyID)
		}
		held[e.KeyID]++
	}
	keep := activityShares(keys, held)
	excess := map[string]int{}
	dropping := false
	for _, k := range keys {
		if n := held[k] - keep[k]; n > 0 {
			excess[k], dropping = n, true
		}
	}
	if !dropping && !aged {
		return // the common case: nothing to drop
	}
	dropped := make([]bool, len(a.Activity))
	for tier := range activityTiersCount {
		for i, e := range a.Activity {
			if excess[e.KeyID] > 0 && e.Last > cutoff && e.tier() == tier {
				dropped[i] = true
				excess[e.KeyID]--
			}
		}
	}
	// Compacted in place: the account's actor is the only one that reads
	// the slice, and nothing keeps a sub-slice of it.
	kept := a.Activity[:0]
	for i, e := range a.Activity {
		if !dropped[i] && e.Last > cutoff {
			kept = append(kept, e)
		}
	}
	clear(a.Activity[len(kept):])
	a.Activity = kept
}

// activityShares returns how many lines each of keys keeps, of the lines
// held says it holds: all, up to activityKeyEntriesMax; and when that
// comes to more than activityEntriesMax together, the most that a level
// applied to every key allows (keys holding less than the level keep all
// they hold), the lines left under the cap going one each to the keys
// above the level, in keys' order.
func activityShares(keys []string, held map[string]int) map[string]int {
	kept := func(level int) (sum int) {
		for _, k := range keys {
			sum += min(held[k], level)
		}
		return sum
	}
	level := activityKeyEntriesMax
	if kept(level) > activityEntriesMax {
		// kept(low) fits and kept(high) does not: halve the gap.
		low, high := 0, level
		for high-low > 1 {
			if mid := (low + high) / 2; kept(mid) <= activityEntriesMax {
				low = mid
			} else {
				high = mid
			}
		}
		level = low
	}
	spare := activityEntriesMax - kept(level)
	keep := make(map[string]int, len(keys))
	for _, k := range keys {
		keep[k] = min(held[k], level)
		if held[k] > level && spare > 0 && level < activityKeyEntriesMax {
			keep[k]++
			spare--
		}
	}
	return keep
}
