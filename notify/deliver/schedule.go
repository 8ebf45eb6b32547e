package deliver

import (
	"container/heap"
	"time"
)

// schedule holds when each account is to be read again: the earliest
// NextAt its outbox named, or a retry. An account is in it once, at its
// earliest time; a heap gives the next in O(log n), so a node with
// thousands of accounts waits on one timer, not one poll of each.
type schedule struct {
	items timerHeap
	// at is each scheduled account's time (the heap's entry for it).
	at map[string]*timerItem
}

type timerItem struct {
	account string
	when    time.Time
	index   int
}

// add schedules account at when, unless it is scheduled sooner already,
// and reports whether the schedule changed.
func (s *schedule) add(account string, when time.Time) bool {
	if s.at == nil {
		s.at = map[string]*timerItem{}
	}
	if it, ok := s.at[account]; ok {
		if !when.Before(it.when) {
			return false
		}
		it.when = when
		heap.Fix(&s.items, it.index)
		return true
	}
	it := &timerItem{account: account, when: when}
	s.at[account] = it
	heap.Push(&s.items, it)
	return true
}

// due takes the accounts whose time is now or past.
func (s *schedule) due(now time.Time) []string {
	var out []string
	for len(s.items) > 0 && !s.items[0].when.After(now) {
		it := heap.Pop(&s.items).(*timerItem)
		delete(s.at, it.account)
		out = append(out, it.account)
	}
	return out
}

// next is the earliest time scheduled.
func (s *schedule) next() (time.Time, bool) {
	if len(s.items) == 0 {
		return time.Time{}, false
	}
	return s.items[0].when, true
}

// timerHeap is container/heap's interface over the items, earliest first.
type timerHeap []*timerItem

func (h timerHeap) Len() int           { return len(h) }
func (h timerHeap) Less(i, j int) bool { return h[i].when.Before(h[j].when) }
func (h timerHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}
func (h *timerHeap) Push(x any) {
	it := x.(*timerItem)
	it.index = len(*h)
	*h = append(*h, it)
}
func (h *timerHeap) Pop() any {
	old := *h
	it := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return it
}
