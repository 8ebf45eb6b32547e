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

// cardView renders an Account card for the principal.
func (a *Account) cardView(card *Card, who Principal, capability Level) CardView {
	v := renderCard(card, a.portfolioAccess(card, who, capability))
	if !who.isAgent() {
		grant := card.Grant
		v.Grant = &grant
	}
	return v
}

// renderCard renders any card with the effective access the caller has.
func renderCard(card *Card, access Level) CardView {
	return CardView{
		ID:              card.ID,
		Version:         versionString(card.Version),
		EffectiveAccess: access,
		Address:         card.Address,
		Name:            card.Name,
		Note:            card.Note,
		ColorKey:        card.ColorKey,
		CoinID:          card.CoinID,
	}
}
