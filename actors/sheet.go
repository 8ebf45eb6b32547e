package actors

// Sheet is the grid of a sheet Space: 5 text columns and 1,000 fixed row
// slots. A new Sheet has the four locked headings, the default fifth, and
// no stored rows.
type Sheet struct {
	Headers  [sheetColumnCount]string `json:"headers"`
	Revision int64                    `json:"revision"`
	Rows     []SheetRow               `json:"rows"` // stored (nonempty) rows in slot order
}

// SheetRow is one stored row slot.
type SheetRow struct {
	Index int                      `json:"index"`
	Cells [sheetColumnCount]string `json:"cells"`
}

const (
	sheetColumnCount = 5
	sheetRowCount    = 1000
)

// sheetLockedHeaders are the first four headings, which never change.
var sheetLockedHeaders = [sheetColumnCount - 1]string{"Address", "Blockchain", "Transaction ID", "Date"}

// sheetDefaultFifthHeader is the fifth heading of a new Sheet.
const sheetDefaultFifthHeader = "Notes"

func newSheet() *Sheet {
	s := &Sheet{Rows: []SheetRow{}}
	copy(s.Headers[:], sheetLockedHeaders[:])
	s.Headers[sheetColumnCount-1] = sheetDefaultFifthHeader
	return s
}

// hasStoredRows reports whether any slot holds content; such a Sheet Space
// cannot be deleted.
func (s *Sheet) hasStoredRows() bool { return s != nil && len(s.Rows) > 0 }
