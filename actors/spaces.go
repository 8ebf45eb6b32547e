package actors

import (
	"slices"
	"unicode/utf8"
)

// Space rules: the Space set (create, rename, type change, delete) and its
// reads. A Space's version changes with its contents and name; the
// account's BookmarkRevision changes with the set (create, rename, type
// change, delete).

const spaceNameCharsMax = 40

// validSpaceType reports whether t is one of the three Space types.
func validSpaceType(t SpaceType) bool {
	return t == SpaceBitcoin || t == SpaceAltcoin || t == SpaceSheet
}

func validateSpaceName(name string) *Error {
	if !utf8.ValidString(name) || name == "" || charCount(name) > spaceNameCharsMax || !isPrintable(name) {
		return Errorf(CodeValidation, "name must be 1 to %d printable characters", spaceNameCharsMax)
	}
	return nil
}

func (a *Account) bookmarkRevisionString() string { return versionString(a.BookmarkRevision) }

// changeSpaceSet bumps the account-wide bookmark revision.
func (a *Account) changeSpaceSet() { a.BookmarkRevision = a.nextVersion() }

// touchSpace gives a Space a new version after its contents or name changed.
func (a *Account) touchSpace(s *Space) { s.Version = a.nextVersion() }

// CreateSpace adds a Space. SpaceID is generated at the edge.
type CreateSpace struct {
	SpaceID                  string    `json:"space_id"`
	ExpectedBookmarkRevision string    `json:"expected_bookmark_revision"`
	Name                     string    `json:"name"`
	Type                     SpaceType `json:"type"`
}

func (*CreateSpace) Kind() Kind { return KindCreateSpace }

func (p *CreateSpace) apply(a *Account, c *Command, capability Level) Result {
	who := c.Principal
	if who.isAgent() && capability < LevelWrite {
		return fail(errReadOnlyKey)
	}
	if err := validateSpaceName(p.Name); err != nil {
		return fail(err)
	}
	if !validSpaceType(p.Type) {
		return fail(Errorf(CodeValidation, "type must be bitcoin, altcoin or sheet"))
	}
	// An agent needs a foothold: at least one Space it may write.
	if who.isAgent() && !a.anySpaceWritable(who, capability) {
		return fail(Errorf(CodeForbidden, "creating a Space needs write access to at least one existing Space"))
	}
	if p.ExpectedBookmarkRevision != a.bookmarkRevisionString() {
		return fail(errStaleVersion)
	}
	// Hidden Spaces count: the limit is on Spaces that exist.
	if limit := a.Plan.limits().spacesMax; len(a.Spaces) >= limit {
		return fail(Errorf(CodeSpaceFull, "the plan allows %d Spaces and the account has %d", limit, len(a.Spaces)))
	}
	if p.SpaceID == "" || a.spaceIDTaken(p.SpaceID) {
		return fail(Errorf(CodeConflict, "space id is taken"))
	}
	grant := LevelNone
	if who.isAgent() {
		grant = LevelWrite
	}
	s := &Space{ID: p.SpaceID, Type: p.Type, Name: p.Name, Grant: grant, Cards: []*Card{}, CreatedAt: c.At}
	if p.Type == SpaceSheet {
		s.Sheet = newSheet()
	}
	a.touchSpace(s)
	a.Spaces = append(a.Spaces, s)
	a.changeSpaceSet()
	a.recordEvent(c, EventBookmarkChanged, ResourceRef{Kind: ResourceSpace, ID: s.ID})
	return created(a.spaceEnvelope(len(a.Spaces)-1, who, capability))
}

func (a *Account) anySpaceWritable(who Principal, capability Level) bool {
	for i := range a.Spaces {
		if a.spaceAccess(i, who, capability) == LevelWrite {
			return true
		}
	}
	return false
}

func (a *Account) spaceIDTaken(id string) bool {
	i, _ := a.space(id)
	return i >= 0
}

// UpdateSpace renames a Space; the owner may also change its type, which
// clears the Space's agent grant (the owner must grant it again).
type UpdateSpace struct {
	SpaceID                  string     `json:"space_id"`
	ExpectedBookmarkRevision string     `json:"expected_bookmark_revision"`
	Name                     *string    `json:"name,omitempty"`
	Type                     *SpaceType `json:"type,omitempty"`
}

func (*UpdateSpace) Kind() Kind { return KindUpdateSpace }

func (p *UpdateSpace) apply(a *Account, c *Command, capability Level) Result {
	who := c.Principal
	i, s, err := a.writableSpace(p.SpaceID, who, capability)
	if err != nil {
		return fail(err)
	}
	if p.Type != nil && who.isAgent() {
		return fail(Errorf(CodeValidation, "agents cannot change a Space's type in v1"))
	}
	if p.Name == nil && p.Type == nil {
		return fail(Errorf(CodeValidation, "send name (or, as the owner, type) to change"))
	}
	if p.Name != nil {
		if err := validateSpaceName(*p.Name); err != nil {
			return fail(err)
		}
	}
	if p.Type != nil && !validSpaceType(*p.Type) {
		return fail(Errorf(CodeValidation, "type must be bitcoin, altcoin or sheet"))
	}
	if p.ExpectedBookmarkRevision != a.bookmarkRevisionString() {
		return fail(errStaleVersion)
	}
	if p.Type != nil && *p.Type != s.Type {
		// Cards and rows are typed by their Space; converting them would
		// silently change what they mean.
		if len(s.Cards) > 0 || s.Sheet.hasStoredRows() {
			return fail(Errorf(CodeConflict, "empty the Space before changing its type"))
		}
		s.Type = *p.Type
		s.Sheet = nil
		if s.Type == SpaceSheet {
			s.Sheet = newSheet()
		}
		s.Grant, s.GrantCleared = LevelNone, true
		a.recordEvent(c, EventScopeChanged, ResourceRef{Kind: ResourceSpace, ID: s.ID})
	}
	if p.Name != nil {
		s.Name = *p.Name
	}
	a.touchSpace(s)
	a.changeSpaceSet()
	a.recordEvent(c, EventBookmarkChanged, ResourceRef{Kind: ResourceSpace, ID: s.ID})
	return ok(a.spaceEnvelope(i, who, capability))
}

// DeleteSpace deletes a Space and its cards. The caller must confirm the
// card deletion and name both the latest bookmark revision and the Space's
// version. At least one Space always remains, and a Sheet Space with stored
// rows cannot be deleted.
type DeleteSpace struct {
	SpaceID                  string `json:"space_id"`
	ExpectedBookmarkRevision string `json:"expected_bookmark_revision"`
	ExpectedVersion          string `json:"expected_version"`
	ConfirmDeleteCards       bool   `json:"confirm_delete_cards"`
}

func (*DeleteSpace) Kind() Kind { return KindDeleteSpace }

func (p *DeleteSpace) apply(a *Account, c *Command, capability Level) Result {
	i, s, err := a.writableSpace(p.SpaceID, c.Principal, capability)
	if err != nil {
		return fail(err)
	}
	if !p.ConfirmDeleteCards {
		return fail(Errorf(CodeValidation, "confirm_delete_cards must be true: deleting a Space deletes its cards"))
	}
	if p.ExpectedBookmarkRevision != a.bookmarkRevisionString() || p.ExpectedVersion != versionString(s.Version) {
		return fail(errStaleVersion)
	}
	if len(a.Spaces) == 1 {
		return fail(Errorf(CodeConflict, "the last Space cannot be deleted"))
	}
	if s.Sheet.hasStoredRows() {
		return fail(Errorf(CodeConflict, "the Sheet has stored rows; clear them before deleting the Space"))
	}
	deleted := len(s.Cards)
	a.Spaces = slices.Delete(a.Spaces, i, i+1)
	a.changeSpaceSet()
	a.recordRemoval(c, EventBookmarkChanged, ResourceRef{Kind: ResourceSpace, ID: s.ID}, s.Grant)
	return ok(SpaceDeletedView{Deleted: true, DeletedCardCount: deleted, BookmarkRevision: a.bookmarkRevisionString()})
}

// SpaceDeletedView is the body of a Space delete.
type SpaceDeletedView struct {
	Deleted          bool   `json:"deleted"`
	DeletedCardCount int    `json:"deleted_card_count"`
	BookmarkRevision string `json:"bookmark_revision"`
}

// readableSpace finds a Space the principal may read; a hidden one is
// absent (404).
func (a *Account) readableSpace(id string, who Principal, capability Level) (int, *Space, *Error) {
	i, s := a.space(id)
	if s == nil || a.spaceAccess(i, who, capability) < LevelRead {
		return -1, nil, errSpaceNotFound
	}
	return i, s, nil
}

// writableSpace finds a Space the principal may change: a read-only key is
// refused first (403), a hidden Space is absent (404), a read-granted one
// refused (403).
func (a *Account) writableSpace(id string, who Principal, capability Level) (int, *Space, *Error) {
	if who.isAgent() && capability < LevelWrite {
		return -1, nil, errReadOnlyKey
	}
	i, s, err := a.readableSpace(id, who, capability)
	if err != nil {
		return -1, nil, err
	}
	if a.spaceAccess(i, who, capability) < LevelWrite {
		return -1, nil, Errorf(CodeForbidden, "the grant on this Space does not permit changes")
	}
	return i, s, nil
}

// SpaceView is a Space as the API shows it.
type SpaceView struct {
	ID              string    `json:"id"`
	Version         string    `json:"version"`
	Type            SpaceType `json:"type"`
	Name            string    `json:"name"`
	EffectiveAccess Level     `json:"effective_access"`
	// Grant is shown to the owner only.
	Grant *Level `json:"grant,omitempty"`
}

func (a *Account) spaceView(i int, who Principal, capability Level) SpaceView {
	s := a.Spaces[i]
	v := SpaceView{ID: s.ID, Version: versionString(s.Version), Type: s.Type, Name: s.Name, EffectiveAccess: a.spaceAccess(i, who, capability)}
	if !who.isAgent() {
		grant := s.Grant
		v.Grant = &grant
	}
	return v
}

// SpaceEnvelope wraps a single Space, with the account's bookmark revision
// so that the next Space-set write needs no extra read.
type SpaceEnvelope struct {
	Space            SpaceView `json:"space"`
	BookmarkRevision string    `json:"bookmark_revision"`
}

func (e SpaceEnvelope) resource() ResourceRef {
	return ResourceRef{Kind: ResourceSpace, ID: e.Space.ID}
}

func (a *Account) spaceEnvelope(i int, who Principal, capability Level) SpaceEnvelope {
	return SpaceEnvelope{Space: a.spaceView(i, who, capability), BookmarkRevision: a.bookmarkRevisionString()}
}

// ListSpacesQuery is GET /bookmark-spaces.
type ListSpacesQuery struct{}

// SpaceListView is the body of GET /bookmark-spaces.
type SpaceListView struct {
	Spaces           []SpaceView `json:"spaces"`
	BookmarkRevision string      `json:"bookmark_revision"`
}

func (ListSpacesQuery) answer(a *Account, who Principal, capability Level, _ int64) (SpaceListView, *Error) {
	v := SpaceListView{Spaces: []SpaceView{}, BookmarkRevision: a.bookmarkRevisionString()}
	for i := range a.Spaces {
		if a.spaceAccess(i, who, capability) >= LevelRead {
			v.Spaces = append(v.Spaces, a.spaceView(i, who, capability))
		}
	}
	return v, nil
}

// GetSpaceQuery is GET /bookmark-spaces/{space_id}.
type GetSpaceQuery struct{ SpaceID string }

func (q GetSpaceQuery) answer(a *Account, who Principal, capability Level, _ int64) (SpaceEnvelope, *Error) {
	i, _, err := a.readableSpace(q.SpaceID, who, capability)
	if err != nil {
		return SpaceEnvelope{}, err
	}
	return a.spaceEnvelope(i, who, capability), nil
}
