package actors

import (
	"testing"
)

// An ImportLabels applies each line with the rule of the command it stands
// for, in order: a refused line changes nothing and the others apply, as
// when each line was a command of its own.
func TestImportLabelsAppliesEachLineByItsOwnRule(t *testing.T) {
	ta := newTestAccount(t, PlanBase)
	card := ta.createCard(ta.owner, addrs[0])
	res := ta.mustOK(ta.owner, &ImportLabels{Lines: []LabelChange{
		{RenameCard: &UpdatePortfolioCard{CardID: card.ID, ExpectedVersion: card.Version, CardFields: CardFields{Name: ptr("Cold")}}},
		{CreateCard: &CreatePortfolioCard{CardID: "imported1", Address: addrs[1], CardFields: CardFields{Name: ptr("Hot")}}},
		{CreateCard: &CreatePortfolioCard{CardID: "imported2", Address: addrs[1], CardFields: CardFields{Name: ptr("Again")}}}, // a duplicate
		{Note: notePut(noteTxID(1), "Rent", true, addrs[1])},                                                                   // on the card created two lines up
		{Note: notePut(noteTxID(2), "Nobody's", true, addrs[5])},
	}})
	refusals := res.Body.(ImportLabelsResult).Refusals
	wantCodes := []Code{"", "", CodeDuplicateAddress, "", CodeNotFound}
	if len(refusals) != len(wantCodes) {
		t.Fatalf("%d results for 5 lines", len(refusals))
	}
	for i, want := range wantCodes {
		got := Code("")
		if refusals[i] != nil {
			got = refusals[i].Code
		}
		if got != want {
			t.Errorf("line %d: %q, want %q", i, got, want)
		}
	}
	v := ta.mustQuery(ta.ownerCred(), LabelsQuery{}).Body.(LabelsView)
	if c, _ := v.AccountCard(addrs[0]); c.Name != "Cold" {
		t.Errorf("renamed card: %+v", c)
	}
	if c, found := v.AccountCard(addrs[1]); !found || c.Name != "Hot" || c.ID != "imported1" {
		t.Errorf("created card: %+v", c)
	}
	if n, _ := v.Note(noteTxID(1)); n != "Rent" || len(v.Notes) != 1 {
		t.Errorf("notes: %+v", v.Notes)
	}
	if v.PortfolioRoom != 8 || v.PortfolioFull == nil || v.PortfolioFull.Code != CodeOverviewFull || v.NoteRoom != notesMax-1 {
		t.Errorf("room: %d cards (%v), %d notes", v.PortfolioRoom, v.PortfolioFull, v.NoteRoom)
	}
}

// An agent cannot import, and a command that is not a batch of single
// changes is refused whole.
func TestImportLabelsRefusals(t *testing.T) {
	ta := newTestAccount(t, PlanBase)
	agent := ta.addKey(LevelWrite)
	create := &CreatePortfolioCard{CardID: "x1", Address: addrs[0]}
	ta.mustFail(CodeForbidden, agent, &ImportLabels{Lines: []LabelChange{{CreateCard: create}}})
	ta.mustFail(CodeValidation, ta.owner, &ImportLabels{})
	ta.mustFail(CodeValidation, ta.owner, &ImportLabels{Lines: []LabelChange{{CreateCard: create, Note: notePut(noteTxID(1), "x", true, addrs[0])}}})
	ta.mustFail(CodeValidation, ta.owner, &ImportLabels{Lines: []LabelChange{{CreateCard: create}, {}}})
	ta.mustFail(CodeValidation, ta.owner, &ImportLabels{Lines: make([]LabelChange, ImportLabelsLinesMax+1)})
	if len(ta.a.Portfolio) != 0 {
		t.Fatal("a refused import changed the account")
	}
}
