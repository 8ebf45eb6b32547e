package actors

// Views are the JSON shapes the API returns. They carry only what the
// caller may see.

// CardView is a card as the API shows it.
type CardView struct {
	ID              string `json:"id"`
	Version         string `json:"version"`
	EffectiveAccess Level  `json:"effective_access"`
	Address         string `json:"address"`
	Name            string `json:"name"`
	Note            string `json:"note"`
	ColorKey        string `json:"color_key"`
	CoinID          string `json:"coin_id,omitempty"`
	// Grant is shown to the owner only: it is the agent grant the owner set.
	Grant *Level `json:"grant,omitempty"`
}

// CardEnvelope wraps a single card, as single-card responses do.
type CardEnvelope struct {
	Card CardView `json:"card"`
}

func (e CardEnvelope) resource() ResourceRef {
	return ResourceRef{Kind: ResourcePortfolioCard, ID: e.Card.ID}
}

func (a *Account) cardView(card *Card, who Principal, capability Level) CardView {
	v := CardView{
		ID:              card.ID,
		Version:         versionString(card.Version),
		EffectiveAccess: a.portfolioAccess(card, who, capability),
		Address:         card.Address,
		Name:            card.Name,
		Note:            card.Note,
		ColorKey:        card.ColorKey,
		CoinID:          card.CoinID,
	}
	if !who.isAgent() {
		grant := card.Grant
		v.Grant = &grant
	}
	return v
}
