package actors

// A wallet label import in few log entries (issue 28: a file of 3,000
// lines the plan refused still grew the log by 3,001 entries, one command a
// line, and four such imports at once doubled other tenants' write
// latency). The edge decides what each line asks for (httpd/labels.go),
// leaves out what would change nothing or what the plan has no room for,
// and sends the rest in ImportLabels commands of up to
// ImportLabelsLinesMax lines. Each line is still the command it stands for,
// applied by that command's own rule, in file order: a line the rule
// refuses changes nothing and the others go on, exactly as when each line
// was a command of its own; only the log holds fewer entries.

// ImportLabelsLinesMax bounds the lines of one ImportLabels command, so
// one entry stays small (a line is at most a few hundred bytes, a note's
// addresses aside) and one command's apply stays short.
const ImportLabelsLinesMax = 500

// ImportLabels is a batch of label lines to apply, in order.
type ImportLabels struct {
	Lines []LabelChange `json:"lines"`
}

// LabelChange is the command one label line stands for: exactly one of
// its fields is set.
type LabelChange struct {
	CreateCard *CreatePortfolioCard `json:"create_card,omitempty"`
	RenameCard *UpdatePortfolioCard `json:"rename_card,omitempty"`
	Note       *PutNote             `json:"note,omitempty"`
}

// ImportLabelsResult says what became of each line of an ImportLabels, in
// order: nil where the line applied, the rule's refusal where it did not.
type ImportLabelsResult struct {
	Refusals []*Error `json:"refusals"`
}

func (*ImportLabels) Kind() Kind { return KindImportLabels }

// Payload is the one command c stands for, or nil when it does not hold
// exactly one.
func (c LabelChange) Payload() Payload {
	var set []Payload
	if c.CreateCard != nil {
		set = append(set, c.CreateCard)
	}
	if c.RenameCard != nil {
		set = append(set, c.RenameCard)
	}
	if c.Note != nil {
		set = append(set, c.Note)
	}
	if len(set) != 1 {
		return nil
	}
	return set[0]
}

func (p *ImportLabels) apply(a *Account, c *Command, capability Level) Result {
	if c.Principal.isAgent() {
		return fail(Errorf(CodeForbidden, "API keys cannot export or import labels; the owner can"))
	}
	if len(p.Lines) == 0 || len(p.Lines) > ImportLabelsLinesMax {
		return fail(Errorf(CodeValidation, "an import command holds 1 to %d lines", ImportLabelsLinesMax))
	}
	for i, l := range p.Lines {
		if l.Payload() == nil {
			return fail(Errorf(CodeValidation, "line %d of the import holds not exactly one change", i))
		}
	}
	res := ImportLabelsResult{Refusals: make([]*Error, len(p.Lines))}
	for i, l := range p.Lines {
		res.Refusals[i] = l.Payload().apply(a, c, capability).err
	}
	return ok(res)
}
