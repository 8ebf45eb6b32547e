package actors

// AccessPanelQuery is what the owner's API access panel shows: the keys,
// and every Account card and Space with its grant and the effective access
// a read key and a write key get from it. The effective access comes from
// the same rules the Agent API applies, so the panel cannot promise an
// agent more (or less) than it will see.
type AccessPanelQuery struct{}

// AccessPanelView is the body of AccessPanelQuery.
type AccessPanelView struct {
	AccountID string          `json:"account_id"`
	Login     string          `json:"login,omitempty"`
	Plan      Plan            `json:"plan"`
	Keys      []KeyView       `json:"keys"`
	Cards     []PanelResource `json:"cards"`
	Spaces    []PanelResource `json:"spaces"`
	// AuditSeq is the account's last change, the cursor of a page drawn
	// from this view for the site's live view (LiveQuery).
	AuditSeq uint64 `json:"-"`
}

// PanelResource is one row of the grants table.
type PanelResource struct {
	Kind ResourceKind `json:"kind"`
	ID   string       `json:"id"`
	Name string       `json:"name"`
	// Detail is the card's address or the Space's type.
	Detail string `json:"detail"`
	Grant  Level  `json:"grant"`
	// ReadKeySees and WriteKeySees are the effective_access a read key and
	// a write key get on this resource.
	ReadKeySees  Level `json:"read_key_sees"`
	WriteKeySees Level `json:"write_key_sees"`
	// HiddenByPlan marks a Space past the plan's count: nobody can reach
	// it until the plan allows it again.
	HiddenByPlan bool `json:"hidden_by_plan,omitempty"`
	// GrantCleared marks a Space whose type change cleared its grant.
	GrantCleared bool `json:"grant_cleared,omitempty"`
}

func (AccessPanelQuery) answer(a *Account, who Principal, _ Level, _ int64) (AccessPanelView, *Error) {
	if who.isAgent() {
		return AccessPanelView{}, Errorf(CodeForbidden, "API keys cannot manage keys or grants")
	}
	reader, writer := Principal{Kind: PrincipalAgent}, Principal{Kind: PrincipalAgent}
	v := AccessPanelView{
		AccountID: a.ID,
		Login:     a.Login,
		Plan:      a.Plan,
		AuditSeq:  a.AuditSeq,
		Keys:      make([]KeyView, 0, len(a.Keys)),
		Cards:     make([]PanelResource, 0, len(a.Portfolio)),
		Spaces:    make([]PanelResource, 0, len(a.Spaces)),
	}
	for _, k := range a.Keys {
		v.Keys = append(v.Keys, keyView(k))
	}
	for _, c := range a.Portfolio {
		v.Cards = append(v.Cards, PanelResource{
			Kind: ResourcePortfolioCard, ID: c.ID, Name: c.Name, Detail: c.Address, Grant: c.Grant,
			ReadKeySees:  a.portfolioAccess(c, reader, LevelRead),
			WriteKeySees: a.portfolioAccess(c, writer, LevelWrite),
		})
	}
	limit := a.Plan.limits().spacesMax
	for i, s := range a.Spaces {
		v.Spaces = append(v.Spaces, PanelResource{
			Kind: ResourceSpace, ID: s.ID, Name: s.Name, Detail: string(s.Type), Grant: s.Grant,
			ReadKeySees:  a.spaceAccess(i, reader, LevelRead),
			WriteKeySees: a.spaceAccess(i, writer, LevelWrite),
			HiddenByPlan: i >= limit,
			GrantCleared: s.GrantCleared,
		})
	}
	return v, nil
}

// KeyNameCharsMax is the longest key name, for the site's form.
const KeyNameCharsMax = keyNameCharsMax
