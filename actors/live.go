package actors

import "sort"

// The owner's live view: the site polls for the account's changes after
// the audit sequence its page was drawn at, and redraws what they touch.
// It reads the same audit events as the agents' change feed, unfiltered
// (the owner sees every resource) and with the resource IDs the agents'
// feed leaves out.

// LiveQuery asks for the changes after AfterSeq.
type LiveQuery struct {
	AfterSeq uint64
}

// liveChangesMax bounds one answer; past it the page redraws everything.
const liveChangesMax = 100

// LiveChange is one change: what, to which resource, and by whom.
type LiveChange struct {
	Kind     EventKind   `json:"kind"`
	Resource ResourceRef `json:"resource"`
	ByAgent  bool        `json:"by_agent"`
	KeyID    string      `json:"key_id,omitempty"`
}

// LiveView answers a LiveQuery. Cursor is the sequence to ask after next
// time. Gap is set when the changes after AfterSeq are not all listed:
// more than liveChangesMax, or some already dropped from the bounded
// audit log; the page must then treat everything as changed.
type LiveView struct {
	Cursor  uint64       `json:"cursor"`
	Changes []LiveChange `json:"changes"`
	Gap     bool         `json:"gap"`
	// ChainCursor is the account's newest chain event (ChainEventSeq):
	// chain events are not changes of the audit log, and a page showing
	// them (the notification centre, the Portfolio's last activity, the
	// navigation's badge) redraws when it moves past the one it was
	// drawn at.
	ChainCursor uint64 `json:"chain_cursor"`
}

func (q LiveQuery) answer(a *Account, who Principal, _ Level, _ int64) (LiveView, *Error) {
	if who.isAgent() {
		return LiveView{}, Errorf(CodeForbidden, "the live view is the owner's")
	}
	if q.AfterSeq > a.AuditSeq {
		return LiveView{}, Errorf(CodeValidation, "after is past the account's last change")
	}
	v := LiveView{Cursor: a.AuditSeq, Changes: []LiveChange{}, ChainCursor: a.ChainEventSeq}
	start := sort.Search(len(a.Audit), func(i int) bool { return a.Audit[i].Seq > q.AfterSeq })
	// Seqs are consecutive, so the first one kept after the cursor tells
	// whether the log dropped some in between.
	if q.AfterSeq < a.AuditSeq && (start == len(a.Audit) || a.Audit[start].Seq != q.AfterSeq+1) {
		v.Gap = true
	}
	for _, e := range a.Audit[start:] {
		if len(v.Changes) == liveChangesMax {
			v.Gap = true
			break
		}
		v.Changes = append(v.Changes, LiveChange{Kind: e.Kind, Resource: e.Resource, ByAgent: e.Principal.isAgent(), KeyID: e.Principal.KeyID})
	}
	return v, nil
}
