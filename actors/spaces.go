package actors

// Space reads. (Space writes arrive with the Spaces issue.)

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

// ListSpacesQuery is GET /bookmark-spaces.
type ListSpacesQuery struct{}

// SpaceListView is the body of GET /bookmark-spaces.
type SpaceListView struct {
	Spaces           []SpaceView `json:"spaces"`
	BookmarkRevision string      `json:"bookmark_revision"`
}

func (ListSpacesQuery) run(a *Account, who Principal, capability Level, _ int64) Result {
	v := SpaceListView{Spaces: []SpaceView{}, BookmarkRevision: versionString(a.BookmarkRevision)}
	for i := range a.Spaces {
		if a.spaceAccess(i, who, capability) >= LevelRead {
			v.Spaces = append(v.Spaces, a.spaceView(i, who, capability))
		}
	}
	return ok(v)
}
