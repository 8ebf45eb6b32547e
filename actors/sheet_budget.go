package actors

import "time"

// The Sheet-write budget: 30 changed writes per minute per account, by the
// account's agents. It is part of the account state, so every replica
// counts the same writes at the same (leader) times and agrees on every
// refusal. The owner's writes neither spend nor meet it: the edge does not
// set EnforceBudget on them (SheetWrite), so agents cannot lock the owner
// out of a Sheet, nor the owner's work lock the agents out.

const (
	sheetWritesPerWindow = 30
	sheetWriteWindow     = time.Minute
)

// sheetBudgetCheck returns a 429 error when the account has used its budget
// for the window ending at now; otherwise nil. It does not spend anything.
func (a *Account) sheetBudgetCheck(now int64) *Error {
	a.pruneSheetWrites(now)
	if len(a.SheetWrites) < sheetWritesPerWindow {
		return nil
	}
	// The oldest counted write leaves the window first.
	wait := time.Duration(a.SheetWrites[0] + int64(sheetWriteWindow) - now)
	seconds := int((wait + time.Second - 1) / time.Second)
	return &Error{
		Code:       CodeRateLimited,
		Message:    "this account has made 30 Sheet writes in the last minute; retry after the Retry-After delay (see /v1/docs/sheets)",
		RetryAfter: max(seconds, 1),
	}
}

// sheetBudgetSpend counts one changed write at now.
func (a *Account) sheetBudgetSpend(now int64) {
	a.SheetWrites = append(a.SheetWrites, now)
}

func (a *Account) pruneSheetWrites(now int64) {
	cutoff := now - int64(sheetWriteWindow)
	n := 0
	for n < len(a.SheetWrites) && a.SheetWrites[n] <= cutoff {
		n++
	}
	if n > 0 {
		a.SheetWrites = a.SheetWrites[n:] // see recordEvent on reslicing
	}
}
