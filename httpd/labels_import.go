package httpd

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/addrwatch/addrwatch/actors"
	"github.com/addrwatch/addrwatch/cluster/clustererr"
)

// A label import costs the log a handful of entries, whatever the file
// (issue 28: a file of 3,000 lines the plan refused grew the raft log by
// 3,001 entries, and four such imports at once on three nodes doubled
// other tenants' write latency). So an import first decides every line on
// the account's state as read before it starts, proposing nothing: a line
// whose label the account already holds is unchanged, and a new card or
// note the plan has no room for is skipped with the rule's own refusal.
// What is left goes to the log in actors.ImportLabels commands of up to
// actors.ImportLabelsLinesMax lines, each line applied by its own rule, so
// the report says of every line exactly what it said when each line was a
// command of its own. The room is counted as the lines are decided; when
// it runs out while creates are waiting, those are proposed first and the
// room counted again from what the rules made of them, so a line is never
// refused for room that a refused line left.
//
// A bookmark card's line (one naming its Space) is its own command,
// CreateBookmarkCard or UpdateBookmarkCard, proposed in file order between
// the batches: ImportLabels holds Account cards and notes only, so it
// needs no new field and no new feature version, and such lines are few,
// bounded by the cards the account's Spaces hold (a create the Space has
// no room for is refused before it is proposed, as an Account card's is).
//
// A dry run (the owner API's ?dry_run=true, the site's preview) decides
// every line the same way and proposes nothing: what waits to be proposed
// is reported as the rules would take it.
//
// During a rolling upgrade, while a voter does not apply ImportLabels yet
// (clustererr.ErrFeatureNotAdmitted), the lines go one command each, as
// before. And an account runs one import at a time on the node that
// serves it (its leader): a second one meanwhile is 409 CONFLICT, since
// its lines would be decided on a state the first is changing.

// labelImportBatchBytesMax bounds the estimated size of one ImportLabels
// command, besides its lines, so an entry stays small even when the notes'
// transactions involve many addresses.
const labelImportBatchBytesMax = 256 << 10

// labelImportProposeReserve is the part of labelImportBudget kept for
// proposing what was decided: deciding (the upstream's verification of
// notes) stops that long before the budget ends, and the lines not
// decided by then are reported as not reached.
const labelImportProposeReserve = 5 * time.Second

// errLabelImportRunning refuses a second import into an account while one
// runs.
var errLabelImportRunning = actors.Errorf(actors.CodeConflict, "a label import into this account is still running; import the file again once its report is in")

// labelImportsRunning holds the accounts with an import running here.
type labelImportsRunning struct{ accounts sync.Map }

// begin claims account's import, or reports that one is running.
func (r *labelImportsRunning) begin(account string) (end func(), ok bool) {
	if _, running := r.accounts.LoadOrStore(account, struct{}{}); running {
		return nil, false
	}
	return func() { r.accounts.Delete(account) }, true
}

// importLabels imports a BIP-329 file into the account of r's credential,
// as its owner, and reports what became of every line; with dryRun it
// saves nothing and reports what an import would do now.
func (s *Server) importLabels(r *request, file []byte, dryRun bool) (labelImportReport, error) {
	if len(file) > labelFileBytesMax {
		return labelImportReport{}, actors.Errorf(actors.CodeValidation, "a label file may be at most %d bytes", labelFileBytesMax)
	}
	records, bad, perr := parseLabelFile(file)
	if perr != nil {
		return labelImportReport{}, actors.Errorf(actors.CodeValidation, "%s", perr.Error())
	}
	c, cancel := context.WithTimeout(context.Background(), labelImportBudget)
	defer cancel()
	who, err := s.authorize(c, r)
	if err != nil {
		return labelImportReport{}, err
	}
	if !dryRun {
		end, claimed := s.labelImports.begin(r.cred.AccountID)
		if !claimed {
			return labelImportReport{}, errLabelImportRunning
		}
		defer end()
	}
	view, err := s.labelsOf(c, r, ReadLeader)
	if err != nil {
		return labelImportReport{}, err
	}
	decide, stopDeciding := context.WithTimeout(c, labelImportBudget-labelImportProposeReserve)
	defer stopDeciding()
	imp := &labelImport{s: s, c: c, decide: decide, r: r, who: who.Principal, view: view, cardRoom: view.PortfolioRoom, noteRoom: view.NoteRoom,
		dryRun: dryRun, spaces: map[string]*actors.LabeledSpace{}}
	for i := range view.Spaces {
		imp.spaces[view.Spaces[i].ID] = &view.Spaces[i]
	}
	var results []labelImportResult
	b := 0
	for _, p := range planLabelLines(records, s.network) {
		for ; b < len(bad) && bad[b].Line < p.Line; b++ {
			results = append(results, labelImportResult{Line: bad[b].Line, Outcome: labelSkipped, Reason: bad[b].Reason})
		}
		results = append(results, imp.line(p))
	}
	for ; b < len(bad); b++ {
		results = append(results, labelImportResult{Line: bad[b].Line, Outcome: labelSkipped, Reason: bad[b].Reason})
	}
	imp.flush()
	report := labelImportReport{DryRun: dryRun, Results: []labelImportResult{}}
	for _, res := range results {
		if res.pending != nil {
			res.Outcome, res.Reason = res.pending.outcome, res.pending.reason
			res.pending = nil
		}
		report.add(res)
	}
	return report, nil
}

// labelImport carries one import's account, principal, deadline, the state
// it decides lines on and the changes it has yet to propose.
type labelImport struct {
	s *Server
	// c bounds the import; decide, which ends earlier, its deciding.
	c, decide context.Context
	r         *request // the import's request, whose credential it runs as
	who       actors.Principal
	view      actors.LabelsView
	// noteContext is the account's, fetched at the first note to verify,
	// with the addresses of the cards the import creates added.
	noteContext *actors.NoteContextView
	created     []string
	// cardRoom and noteRoom are how many more new cards and notes the
	// account holds once the changes decided so far apply.
	cardRoom, noteRoom int
	pending            []*labelChange
	// oneByOne: a voter does not apply ImportLabels yet.
	oneByOne bool
	// dryRun proposes nothing (importLabels).
	dryRun bool
	// spaces are the account's Spaces by ID, each with its version as the
	// import's own bookmark commands leave it and its room as the lines
	// decided so far leave it.
	spaces map[string]*actors.LabeledSpace
}

// labelChange is a line's change waiting to be proposed, and then what
// became of it.
type labelChange struct {
	change  actors.LabelChange
	success string // the outcome if the rule takes it
	what    string // the thing changed, for a refusal's reason
	newCard bool   // it uses room for a card
	newNote bool   // it uses room for a note
	bytes   int    // its estimated size in a command
	// bookmark is a bookmark card's change, proposed as its own command
	// (an ImportLabels line holds none).
	bookmark *bookmarkChange

	outcome, reason string
}

// bookmarkChange is a bookmark card created in its Space or renamed.
type bookmarkChange struct {
	space  *actors.LabeledSpace
	create *actors.CreateBookmarkCard // or
	rename *actors.UpdateBookmarkCard
}

// line decides one planned line: its outcome now, or a change to propose.
func (imp *labelImport) line(l labelLine) labelImportResult {
	res := labelImportResult{Line: l.Line, Type: quoteShortRaw(l.Type), Ref: echoRef(l.Ref), label: l.Label, space: l.Space}
	if l.canonical != "" {
		res.Ref = l.canonical
	}
	var change *labelChange
	switch {
	case l.reason != "":
		res.Outcome, res.Reason = labelSkipped, l.reason
	case imp.decide.Err() != nil:
		res.Outcome, res.Reason = labelSkipped, "not reached before the import's time ran out; import the file again to go on (what was imported is then unchanged)"
	case l.Type == string(actors.LabelAddress) && l.HasSpace:
		change, res.Outcome, res.Reason = imp.bookmark(l.Space, l.canonical, l.Label)
	case l.Type == string(actors.LabelAddress):
		change, res.Outcome, res.Reason = imp.address(l.canonical, l.Label)
	default:
		change, res.Outcome, res.Reason = imp.transaction(l.canonical, l.Label)
	}
	if change != nil {
		imp.pending = append(imp.pending, change)
		res.pending = change
	}
	return res
}

// address names the Account card of address label, creating it if the
// account has none and the plan has room.
func (imp *labelImport) address(address, label string) (change *labelChange, outcome, reason string) {
	if card, found := imp.view.AccountCard(address); found {
		if card.Name == label {
			return nil, labelUnchanged, ""
		}
		rename := &actors.UpdatePortfolioCard{CardID: card.ID, ExpectedVersion: card.Version, CardFields: actors.CardFields{Name: &label}}
		return &labelChange{change: actors.LabelChange{RenameCard: rename}, success: labelChanged, what: "the Account card", bytes: len(card.ID) + len(label)}, "", ""
	}
	if !imp.roomFor(&imp.cardRoom, func(p *labelChange) bool { return p.newCard }) {
		return nil, labelSkipped, labelRefusal(imp.view.PortfolioFull, "an Account card")
	}
	imp.created = append(imp.created, address)
	create := &actors.CreatePortfolioCard{CardID: newID(), Address: address, CardFields: actors.CardFields{Name: &label}}
	return &labelChange{change: actors.LabelChange{CreateCard: create}, success: labelImported, what: "an Account card", newCard: true, bytes: len(address) + len(label)}, "", ""
}

// bookmark names the bookmark card of address in the Space spaceID,
// creating it if the Space has none and has room.
func (imp *labelImport) bookmark(spaceID, address, label string) (change *labelChange, outcome, reason string) {
	space, found := imp.spaces[spaceID]
	switch {
	case !found:
		return nil, labelSkipped, "the line names a Space (" + spaceField + " " + quoteShort(spaceID) + ") this account does not hold; without " + spaceField + " it would name an Account card"
	case space.Type != actors.SpaceBitcoin:
		return nil, labelSkipped, "the Space " + quoteShortName(space.Name) + " is not a Bitcoin Space (its type is " + string(space.Type) + "); a Bitcoin address label goes to a Bitcoin Space"
	}
	if card, found := imp.view.BookmarkCard(spaceID, address); found {
		if card.Name == label {
			return nil, labelUnchanged, ""
		}
		rename := &actors.UpdateBookmarkCard{SpaceID: spaceID, CardID: card.ID, ExpectedVersion: card.Version, CardFields: actors.CardFields{Name: &label}}
		return &labelChange{bookmark: &bookmarkChange{space: space, rename: rename}, success: labelChanged, what: "the bookmark card"}, "", ""
	}
	if space.CardRoom <= 0 {
		return nil, labelSkipped, labelRefusal(space.Full, "a bookmark card")
	}
	space.CardRoom--
	create := &actors.CreateBookmarkCard{CardID: newID(), SpaceID: spaceID, Address: address, CardFields: actors.CardFields{Name: &label}}
	return &labelChange{bookmark: &bookmarkChange{space: space, create: create}, success: labelImported, what: "a bookmark card"}, "", ""
}

// quoteShortName is a Space's name as a reason repeats it.
func quoteShortName(name string) string { return "“" + truncateText(name, 40) + "”" }

// transaction saves label as the note of txid, once the upstream has
// verified it.
func (imp *labelImport) transaction(txid, label string) (change *labelChange, outcome, reason string) {
	previous, found := imp.view.Note(txid)
	if found && previous == label {
		return nil, labelUnchanged, ""
	}
	if err := actors.ValidateNoteText(label); err != nil {
		return nil, labelSkipped, "the label is longer than a note may be (50 code points) or is not text"
	}
	if !found && !imp.roomFor(&imp.noteRoom, func(p *labelChange) bool { return p.newNote }) {
		return nil, labelSkipped, labelRefusal(imp.view.NotesFull, "the note")
	}
	nc, err := imp.notes()
	if err != nil {
		return nil, labelSkipped, labelRefusal(err, "the note")
	}
	note, err := imp.s.verifiedNote(imp.decide, imp.r.cred.AccountID, nc, txid, label)
	if err != nil {
		if !found {
			imp.noteRoom++ // decided against: the room is not used
		}
		return nil, labelSkipped, labelRefusal(err, "the note")
	}
	size := len(txid) + len(label)
	for _, a := range note.Addresses {
		size += len(a) + len(`"",`)
	}
	success := labelImported
	if found {
		success = labelChanged
	}
	return &labelChange{change: actors.LabelChange{Note: note}, success: success, what: "the note", newNote: !found, bytes: size}, "", ""
}

// roomFor takes one from *room for a new card or note. With none left
// while changes that use it wait, it proposes those and counts again from
// what the rules made of them (uses tells which changes use it).
func (imp *labelImport) roomFor(room *int, uses func(*labelChange) bool) bool {
	if *room <= 0 {
		waiting := 0
		for _, p := range imp.pending {
			if uses(p) {
				waiting++
			}
		}
		if waiting == 0 {
			return false
		}
		refused := 0
		for _, p := range imp.flush() {
			if uses(p) && p.outcome == labelSkipped {
				refused++
			}
		}
		*room += refused
		if *room <= 0 {
			return false
		}
	}
	*room--
	return true
}

// notes returns the account's note context, fetching it once, with the
// addresses of the cards the import creates (they are applied before any
// later line's note).
func (imp *labelImport) notes() (actors.NoteContextView, error) {
	if imp.noteContext == nil {
		res, err := ask(imp.c, imp.s, imp.r, actors.NoteContextQuery{}, ReadLeader)
		if err != nil {
			return actors.NoteContextView{}, err
		}
		nc := res
		imp.noteContext = &nc
	}
	nc := *imp.noteContext
	nc.Addresses = append(append([]string(nil), nc.Addresses...), imp.created...)
	return nc, nil
}

// flush proposes every waiting change, in order, in as few commands as
// the bounds allow, and returns them with their outcomes. A dry run
// proposes nothing: each change is reported as the rules would take it.
func (imp *labelImport) flush() []*labelChange {
	done := imp.pending
	for rest := imp.pending; len(rest) > 0; {
		if imp.dryRun {
			rest[0].settle(nil)
			rest = rest[1:]
			continue
		}
		if rest[0].bookmark != nil {
			imp.proposeBookmark(rest[0])
			rest = rest[1:]
			continue
		}
		n, size := 0, 0
		for n < len(rest) && rest[n].bookmark == nil && n < actors.ImportLabelsLinesMax && (n == 0 || size+rest[n].bytes <= labelImportBatchBytesMax) {
			size += rest[n].bytes
			n++
		}
		imp.propose(rest[:n])
		rest = rest[n:]
	}
	imp.pending = nil
	return done
}

// proposeBookmark proposes a bookmark card's change, a create with its
// Space's version as the import left it, and keeps the version the
// command leaves.
func (imp *labelImport) proposeBookmark(p *labelChange) {
	b := p.bookmark
	var payload actors.Payload = b.rename
	if b.create != nil {
		b.create.ExpectedSpaceVersion = b.space.Version
		payload = b.create
	}
	res, err := imp.proposeCommand(payload)
	if err == nil {
		var done actors.BookmarkEnvelope
		if done, err = bodyOf[actors.BookmarkEnvelope](res); err == nil {
			b.space.Version = done.Space.Version
		}
	}
	if err != nil && b.create != nil {
		b.space.CardRoom++ // a refused create leaves the Space its room
	}
	p.settle(err)
}

// propose sends one batch of changes as an ImportLabels command, or one
// command each while a voter does not apply ImportLabels yet.
func (imp *labelImport) propose(batch []*labelChange) {
	if !imp.oneByOne {
		lines := make([]actors.LabelChange, len(batch))
		for i, p := range batch {
			lines[i] = p.change
		}
		res, err := imp.proposeCommand(&actors.ImportLabels{Lines: lines})
		if errors.Is(err, clustererr.ErrFeatureNotAdmitted) {
			imp.oneByOne = true
		} else {
			var done actors.ImportLabelsResult
			if err == nil {
				done, err = bodyOf[actors.ImportLabelsResult](res)
			}
			for i, p := range batch {
				refusal := err
				if err == nil && done.Refusals[i] != nil {
					refusal = done.Refusals[i]
				}
				p.settle(refusal)
			}
			return
		}
	}
	for _, p := range batch {
		_, err := imp.proposeCommand(p.change.Payload())
		p.settle(err)
	}
}

func (p *labelChange) settle(refusal error) {
	if refusal != nil {
		p.outcome, p.reason = labelSkipped, labelRefusal(refusal, p.what)
		return
	}
	p.outcome = p.success
}

func (imp *labelImport) proposeCommand(p actors.Payload) (actors.Result, error) {
	return imp.s.propose(imp.c, &actors.Command{Account: imp.r.cred.AccountID, At: imp.s.now().UnixNano(), Principal: imp.who, Payload: p})
}
