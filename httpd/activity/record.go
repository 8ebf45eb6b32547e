package activity

import (
	"context"
	"errors"

	"github.com/addrwatch/addrwatch/actors"
	"github.com/addrwatch/addrwatch/cluster/clustererr"
)

// record proposes one key's lines of a window. It proposes
// RecordKeyActivity, which keeps each key's share of the account's lines
// (actors/activity_shares.go). While a voter runs a release from before
// it (a rolling upgrade), the node refuses that kind before it reaches
// the log, and the lines go as RecordActivity, which every voter of
// version 2 applies alike: the record must be the same on every replica,
// and an older node would apply the newer kind's lines otherwise.
func (l *Log) record(ref keyRef, at int64, entries []actors.ActivityEntry) {
	ctx, cancel := context.WithTimeout(context.Background(), flushTimeout)
	defer cancel()
	cmd := &actors.Command{Account: ref.account, At: at, Principal: actors.Principal{Kind: actors.PrincipalAgent, KeyID: ref.keyID},
		Payload: &actors.RecordKeyActivity{Entries: entries}}
	_, err := l.store.Propose(ctx, cmd)
	if errors.Is(err, clustererr.ErrFeatureNotAdmitted) {
		// The feature gate refused it before the log: nothing was
		// recorded, so nothing is recorded twice.
		cmd.Payload = &actors.RecordActivity{Entries: asVersion2(entries)}
		_, err = l.store.Propose(ctx, cmd)
	}
	if refused, isRefusal := errors.AsType[*actors.Error](err); isRefusal && refused.Code != actors.CodeUnauthorized {
		// A revoked key's last lines are refused; anything else is a bug
		// in the edge's entries.
		l.log.Warn("activity record refused", "code", refused.Code, "error", refused.Message)
	}
}

// asVersion2 is entries as RecordActivity takes them: its one overflow
// line counts the changes' overflow too.
func asVersion2(entries []actors.ActivityEntry) []actors.ActivityEntry {
	var out []actors.ActivityEntry
	other := -1
	for _, e := range entries {
		if e.Op == actors.ActivityOtherChanges {
			e.Op = actors.ActivityOther
		}
		if e.Op != actors.ActivityOther {
			out = append(out, e)
			continue
		}
		if other < 0 {
			other = len(out)
			out = append(out, e)
			continue
		}
		o := &out[other]
		o.Count += e.Count
		o.First, o.Last = min(o.First, e.First), max(o.Last, e.Last)
	}
	return out
}
