package actors

import (
	"fmt"
	"testing"
)

type panicPayload struct{}

func (panicPayload) Kind() Kind { return Kind(250) }
func (panicPayload) apply(*Account, *Command, Level) Result {
	panic("rule bug")
}

func TestSafeApplyRecoversAndKeepsState(t *testing.T) {
	ta := newTestAccount(t, PlanBase)
	next, res, recovered := SafeApply(ta.a, ta.cmd(ownerP, panicPayload{}))
	if next != ta.a {
		t.Fatalf("SafeApply replaced the account after a panic")
	}
	wantCode(t, res, CodeInternal)
	if reported := fmt.Sprint(recovered); reported != "rule bug" {
		t.Fatalf("SafeApply reported %q", reported)
	}
	// Without a panic SafeApply is Apply.
	next, res, recovered = SafeApply(ta.a, ta.cmd(ownerP, &SetPlan{Plan: PlanExtended}))
	if res.err != nil || next.Plan != PlanExtended || recovered != nil {
		t.Fatalf("SafeApply %+v, recovered %v", res, recovered)
	}
}

type panicQuery struct{}

func (panicQuery) run(*Account, Principal, Level, int64) Result { panic("query bug") }

func TestSafeQueryRecovers(t *testing.T) {
	ta := newTestAccount(t, PlanBase)
	res, recovered := SafeQuery(ta.a, ta.ownerCred(), panicQuery{}, nil)
	wantCode(t, res, CodeInternal)
	if reported := fmt.Sprint(recovered); reported != "query bug" {
		t.Fatalf("SafeQuery reported %q", reported)
	}
	// Without a panic SafeQuery is RunQuery.
	res, recovered = SafeQuery(ta.a, ta.ownerCred(), MeQuery{}, nil)
	if res.err != nil || res.Body.(MeView).AccountID != ta.id || recovered != nil {
		t.Fatalf("SafeQuery %+v, recovered %v", res, recovered)
	}
}
