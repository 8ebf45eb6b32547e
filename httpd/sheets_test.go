package httpd

import "testing"

// The Sheet-write budget is the agents' (issue 13): an owner's write
// carries no EnforceBudget, so it neither spends nor meets the budget,
// and agents cannot lock the owner out. Every write asks for plain-text
// cells.
func TestSheetWriteRules(t *testing.T) {
	t.Parallel()
	cases := []struct {
		budget bool
		aud    audience
		want   bool
	}{
		{true, audienceAgent, true},
		{true, audienceOwner, false},
		{false, audienceAgent, false},
		{false, audienceOwner, false},
	}
	for _, tc := range cases {
		w := (&Server{sheetBudget: tc.budget}).sheetWriteRules(tc.aud)
		if w.EnforceBudget != tc.want || !w.PlainTextCells {
			t.Errorf("budget %v, audience %d: %+v, want EnforceBudget %v and PlainTextCells", tc.budget, tc.aud, w, tc.want)
		}
	}
}
