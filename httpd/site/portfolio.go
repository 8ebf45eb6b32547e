package site

import (
	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/actors"
)

// The site's Portfolio: the owner's Account cards, added, edited and
// deleted with the same commands and rules as the API. The add form is
// checked as the owner types by the API's own validation (the
// /portfolio/validate answer is ValidateCreatePortfolioCardQuery's), and
// checked again on submit, so a page without scripts loses nothing but the
// early warning.

var portfolioNotices = map[string]string{
	"card-added":   "Account card added. Agents see it once you grant it (it starts at none).",
	"card-saved":   "Account card saved.",
	"card-deleted": "Account card deleted.",
	"moved":        "Card moved. It has a new ID where it went; its old one is retired.",
}

// cardForm is what the owner typed into an add or edit form.
type cardForm struct {
	Address, Name, Note, Color string
}

func readCardForm(ctx *fasthttp.RequestCtx) cardForm {
	return cardForm{Address: formValue(ctx, "address"), Name: formValue(ctx, "name"), Note: formValue(ctx, "note"), Color: formValue(ctx, "color_key")}
}

// fields is the form as the card fields a command carries; an empty color
// keeps the card's (or the default).
func (f cardForm) fields() actors.CardFields {
	fields := actors.CardFields{Name: &f.Name, Note: &f.Note}
	if f.Color != "" {
		fields.ColorKey = &f.Color
	}
	return fields
}

// portfolioData is the Portfolio page's.
type portfolioData struct {
	Cards  []cardRow
	Total  totalShown // of every card's balance
	Form   cardForm   // the add form, kept when it was refused
	Colors []string
	// Full: the Portfolio holds the plan's Account cards, so Limit
	// replaces the add form.
	Full  bool
	Limit limitShown
	// Start is the getting-started list, while the account holds no card
	// (first_run.go); nil after.
	Start []startStep
}

func (s *Site) registerPortfolio(r Router) {
	r.GET("/portfolio", s.signedIn(func(ctx *fasthttp.RequestCtx, sess *siteSession) {
		s.renderPortfolio(ctx, sess, fasthttp.StatusOK, cardForm{}, "", false)
	}))
	r.POST("/portfolio/cards", s.signedIn(s.addCardForm))
	r.POST("/portfolio/validate", s.signedIn(s.validateCardForm))
	r.GET("/portfolio/cards/{card_id}", s.signedIn(s.cardPage))
	r.POST("/portfolio/cards/{card_id}", s.signedIn(s.editCardForm))
	r.GET("/portfolio/cards/{card_id}/delete", s.signedIn(s.deleteCardPage))
	r.POST("/portfolio/cards/{card_id}/delete", s.signedIn(s.deleteCardForm))
}

// renderPortfolio draws the Portfolio, with form and problem when an add
// or a move was refused; full says the refusal was the plan's limit, which
// the page answers in the limit's words.
func (s *Site) renderPortfolio(ctx *fasthttp.RequestCtx, sess *siteSession, status int, form cardForm, problem string, full bool) {
	r := s.reads(sess)
	_, page := r.layout("portfolio")
	res := read(r, actors.ListPortfolioQuery{})
	me := read(r, actors.MeQuery{})
	last := read(r, actors.LastChainEventsQuery{})
	if r.failed(ctx) {
		return
	}
	used := me.PortfolioCards
	start := s.startSteps(r, len(res.Cards))
	if r.failed(ctx) {
		return
	}
	cards, total := s.cardRows(sess, res.Cards)
	for i := range cards {
		if e, has := last[cards[i].ID]; has {
			cards[i].LastActivity = lastActivityOf(e)
		}
	}
	page.Title, page.Problem = "Portfolio", problem
	page.Notice = portfolioNotices[string(ctx.QueryArgs().Peek("m"))]
	d := portfolioData{Cards: cards, Total: total, Form: form, Colors: actors.ColorKeys, Full: used.Used >= used.Limit,
		Limit: portfolioLimit(me.Plan, used.Used), Start: start}
	d.Limit.ID = "portfolio-limit"
	if full && d.Full {
		// The limit replaces the add form, so the reason keeps what was
		// typed into it.
		page.Problem = "The card was not added. " + d.Limit.String() + ` You typed: address “` + form.Address + `”, name “` + form.Name + `”, note “` + form.Note + `”.`
	}
	page.Data = d
	s.renderPage(ctx, status, "portfolio", page)
}

func (s *Site) addCardForm(ctx *fasthttp.RequestCtx, sess *siteSession) {
	form := readCardForm(ctx)
	_, err := s.siteWrite(sess, &actors.CreatePortfolioCard{CardID: s.store.NewID(), Address: form.Address, CardFields: form.fields()})
	if err != nil {
		s.renderPortfolio(ctx, sess, s.edge.Status(err.Code), form, err.Message, err.Code == actors.CodeOverviewFull)
		return
	}
	s.redirect(ctx, "/portfolio?m=card-added")
}

// validateCardForm answers the add form's check as the owner types: the
// API's validate endpoint, for the session.
func (s *Site) validateCardForm(ctx *fasthttp.RequestCtx, sess *siteSession) {
	form := readCardForm(ctx)
	_, err := ask(s, sess, actors.ValidateCreatePortfolioCardQuery{Card: actors.CreatePortfolioCard{CardID: "validate", Address: form.Address, CardFields: form.fields()}})
	siteHeaders(ctx)
	if err != nil {
		s.edge.WriteJSON(ctx, fasthttp.StatusOK, map[string]any{"valid": false, "code": err.Code, "error": err.Message})
		return
	}
	s.edge.WriteJSON(ctx, fasthttp.StatusOK, map[string]any{"valid": true})
}

// cardData is the edit page's: the card as stored, and what the owner
// typed when a save was refused.
type cardData struct {
	Card    actors.CardView
	Balance balanceShown
	Form    cardForm
	Colors  []string
	Stale   bool // the card changed under the owner's edit
	// Targets are the Spaces the card may be offered to move into (the
	// move rules, not this list, decide: a refused move says why).
	Targets []moveTarget
}

func (s *Site) card(sess *siteSession, id string) (actors.CardView, *actors.Error) {
	res, err := ask(s, sess, actors.GetPortfolioCardQuery{CardID: id})
	if err != nil {
		return actors.CardView{}, err
	}
	return res.Card, nil
}

func (s *Site) cardPage(ctx *fasthttp.RequestCtx, sess *siteSession) {
	r := s.reads(sess)
	card := read(r, actors.GetPortfolioCardQuery{CardID: pathParam(ctx, "card_id")}).Card
	if r.failed(ctx) {
		return
	}
	s.renderCard(ctx, sess, fasthttp.StatusOK, card, cardForm{Name: card.Name, Note: card.Note, Color: card.ColorKey}, false, "")
}

func (s *Site) renderCard(ctx *fasthttp.RequestCtx, sess *siteSession, status int, card actors.CardView, form cardForm, stale bool, problem string) {
	r := s.reads(sess)
	_, page := r.layout("portfolio")
	spaces := read(r, actors.ListSpacesQuery{})
	if r.failed(ctx) {
		return
	}
	balance, _ := s.balancesOf(sess, []string{card.Address})
	page.Title, page.Problem = "Account card", problem
	page.Data = cardData{Card: card, Balance: balance[0], Form: form, Colors: actors.ColorKeys, Stale: stale, Targets: moveTargets(spaces, "")}
	s.renderPage(ctx, status, "card", page)
}

// editCardForm saves the edit form with the version the page was
// rendered from. When the card changed meanwhile (an agent, another tab),
// nothing is overwritten: the page shows the card as it is now, with what
// the owner typed still in the form, to look over and save again.
func (s *Site) editCardForm(ctx *fasthttp.RequestCtx, sess *siteSession) {
	id := pathParam(ctx, "card_id")
	form := readCardForm(ctx)
	_, err := s.siteWrite(sess, &actors.UpdatePortfolioCard{CardID: id, ExpectedVersion: formValue(ctx, "expected_version"), CardFields: form.fields()})
	if err == nil {
		s.redirect(ctx, "/portfolio?m=card-saved")
		return
	}
	card, cerr := s.card(sess, id)
	if cerr != nil {
		s.siteError(ctx, cerr)
		return
	}
	if err.Code == actors.CodeStaleVersion {
		s.renderCard(ctx, sess, fasthttp.StatusConflict, card, form, true,
			"This card changed while you were editing it (an agent or another page saved first). It now holds what is shown below; your changes are still in the form. Save again to apply them.")
		return
	}
	s.renderCard(ctx, sess, s.edge.Status(err.Code), card, form, false, err.Message)
}

func (s *Site) deleteCardPage(ctx *fasthttp.RequestCtx, sess *siteSession) {
	r := s.reads(sess)
	card := read(r, actors.GetPortfolioCardQuery{CardID: pathParam(ctx, "card_id")}).Card
	_, page := r.layout("portfolio")
	if r.failed(ctx) {
		return
	}
	page.Title, page.Narrow, page.Data = "Delete an Account card", true, cardData{Card: card}
	s.renderPage(ctx, fasthttp.StatusOK, "card_delete", page)
}

func (s *Site) deleteCardForm(ctx *fasthttp.RequestCtx, sess *siteSession) {
	id := pathParam(ctx, "card_id")
	_, err := s.siteWrite(sess, &actors.DeletePortfolioCard{CardID: id, ExpectedVersion: formValue(ctx, "expected_version")})
	if err == nil {
		s.redirect(ctx, "/portfolio?m=card-deleted")
		return
	}
	if err.Code == actors.CodeStaleVersion {
		card, cerr := s.card(sess, id)
		if cerr != nil {
			s.siteError(ctx, cerr)
			return
		}
		s.renderCard(ctx, sess, fasthttp.StatusConflict, card, cardForm{Name: card.Name, Note: card.Note, Color: card.ColorKey}, true,
			"This card changed after you asked to delete it, so it was not deleted. Look at it as it is now, and delete it again if you still mean to.")
		return
	}
	s.siteError(ctx, err)
}
