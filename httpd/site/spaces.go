package site

import (
	"net/url"
	"slices"

	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/actors"
	"github.com/addrwatch/addrwatch/chain"
)

// The site's Spaces: the owner's Spaces and their bookmark cards, with the
// API's commands and rules (the same versions and revisions: a page sends
// the ones it was drawn from, so a change made meanwhile is refused, never
// overwritten). A refused move says which rule refused it.

var spaceNotices = map[string]string{
	"space-added":    "Space created. Agents see it once you grant it (it starts at none).",
	"space-saved":    "Space saved.",
	"space-retyped":  "Space type changed. Its agent grant was cleared: grant it again on API access.",
	"space-deleted":  "Space deleted, with its cards.",
	"bookmark-added": "Card added.",
	"bookmark-saved": "Card saved.",
	"bookmark-gone":  "Card deleted.",
	"moved":          "Card moved.",
}

// spacesData is the Spaces page's.
type spacesData struct {
	Spaces   []actors.SpaceView
	Revision string
	Form     struct{ Name, Type string }
	// Full: the plan holds no more Spaces, so Limit replaces the create
	// form.
	Full  bool
	Limit limitShown
}

// spaceData is a Space's page.
type spaceData struct {
	Space    actors.SpaceView
	Revision string
	Cards    []cardRow
	Bitcoin  bool       // a bitcoin Space: its cards show balances
	Total    totalShown // of a bitcoin Space's cards
	spaceKept
	Coins     []chain.Coin
	Colors    []string
	Targets   []moveTarget // where a card of this Space may be moved
	SheetRows int          // stored rows of a Sheet Space, as far as one page counts
	SheetMore bool         // and more than that
	// Full: the Space holds the plan's cards, so Limit replaces the add
	// form.
	Full  bool
	Limit limitShown
}

// spaceKept is what the owner typed into a Space page's form that was
// refused: the page is drawn again with it in the same form, the reason
// above, and the focus on that form's first field, so nothing typed is
// lost (a bookmark card's note above all).
type spaceKept struct {
	Form       cardForm // the add form
	Coin       string
	AddRefused bool
	// EditCard is the card whose row form was refused, Edit what it held;
	// EditStale: refused because the card changed meanwhile.
	EditCard  string
	Edit      cardForm
	EditStale bool
	// Rename is the name typed into a refused rename ("" keeps the
	// Space's own).
	Rename        string
	RenameRefused bool
}

// moveTarget is a destination of the move menus.
type moveTarget struct {
	Value, Label string
}

func (s *Site) registerSpaces(r Router) {
	r.GET("/spaces", s.signedIn(func(ctx *fasthttp.RequestCtx, sess *siteSession) {
		s.renderSpaces(ctx, sess, fasthttp.StatusOK, "", "", nil)
	}))
	r.POST("/spaces", s.signedIn(s.createSpaceForm))
	r.GET("/spaces/{space_id}", s.signedIn(func(ctx *fasthttp.RequestCtx, sess *siteSession) {
		s.renderSpace(ctx, sess, fasthttp.StatusOK, pathParam(ctx, "space_id"), spaceKept{}, "")
	}))
	r.POST("/spaces/{space_id}", s.signedIn(s.updateSpaceForm))
	r.GET("/spaces/{space_id}/delete", s.signedIn(s.deleteSpacePage))
	r.POST("/spaces/{space_id}/delete", s.signedIn(s.deleteSpaceForm))
	r.POST("/spaces/{space_id}/cards", s.signedIn(s.addBookmarkForm))
	r.POST("/spaces/{space_id}/cards/{card_id}", s.signedIn(s.editBookmarkForm))
	r.POST("/spaces/{space_id}/cards/{card_id}/delete", s.signedIn(s.deleteBookmarkForm))
	r.POST("/moves", s.signedIn(s.moveForm))
}

// renderSpaces draws the Spaces page; refused is why a create was
// refused (nil when none was sent), which a full plan answers with the
// same words as the page (limits.go).
func (s *Site) renderSpaces(ctx *fasthttp.RequestCtx, sess *siteSession, status int, name, typ string, refused *actors.Error) {
	r := s.reads(sess)
	_, page := r.layout("spaces")
	list := read(r, actors.ListSpacesQuery{})
	me := read(r, actors.MeQuery{})
	if r.failed(ctx) {
		return
	}
	d := spacesData{Spaces: list.Spaces, Revision: list.BookmarkRevision, Full: me.BookmarkSpaces.Used >= me.BookmarkSpaces.Limit,
		Limit: spacesLimit(me.Plan, me.BookmarkSpaces.Used)}
	d.Limit.ID = "spaces-limit"
	d.Form.Name, d.Form.Type = name, typ
	switch {
	case refused == nil:
	case refused.Code == actors.CodeSpaceFull:
		page.Problem = "The Space was not created. " + d.Limit.String()
	default:
		page.Problem = spaceRefusal(refused)
	}
	page.Title, page.Data = "Spaces", d
	page.Notice = spaceNotices[string(ctx.QueryArgs().Peek("m"))]
	s.renderPage(ctx, status, "spaces", page)
}

func (s *Site) createSpaceForm(ctx *fasthttp.RequestCtx, sess *siteSession) {
	name, typ := formValue(ctx, "name"), formValue(ctx, "type")
	res, err := s.siteWrite(sess, &actors.CreateSpace{SpaceID: s.store.NewID(), ExpectedBookmarkRevision: formValue(ctx, "expected_bookmark_revision"), Name: name, Type: actors.SpaceType(typ)})
	if err != nil {
		s.renderSpaces(ctx, sess, s.edge.Status(err.Code), name, typ, err)
		return
	}
	created, berr := actors.Answer[actors.SpaceEnvelope](res, nil)
	if berr != nil {
		s.siteError(ctx, s.typed(berr))
		return
	}
	s.redirect(ctx, "/spaces/"+url.PathEscape(created.Space.ID)+"?m=space-added")
}

func (s *Site) renderSpace(ctx *fasthttp.RequestCtx, sess *siteSession, status int, id string, kept spaceKept, problem string) {
	r := s.reads(sess)
	_, page := r.layout("spaces")
	list := read(r, actors.ListBookmarksQuery{SpaceID: id})
	spaces := read(r, actors.ListSpacesQuery{})
	me := read(r, actors.MeQuery{})
	if r.failed(ctx) {
		return
	}
	d := spaceData{Space: list.Space, Revision: spaces.BookmarkRevision, Cards: withoutBalances(list.Cards), spaceKept: kept, Coins: chain.Coins(), Colors: actors.ColorKeys,
		Full: len(list.Cards) >= me.Plan.Allows().SpaceCards, Limit: spaceCardsLimit(me.Plan, len(list.Cards))}
	d.Limit.ID = "space-cards-limit"
	if kept.EditCard != "" {
		switch at := slices.IndexFunc(list.Cards, func(c actors.CardView) bool { return c.ID == kept.EditCard }); {
		case at < 0:
			// The card is gone (deleted or moved meanwhile): no row keeps
			// what was typed, so the reason does.
			problem += ` You typed: name “` + kept.Edit.Name + `”, note “` + kept.Edit.Note + `”.`
		case kept.EditStale:
			now := list.Cards[at]
			problem = `The card was not saved: it changed after this page was drawn (an agent, or another page). It now holds name “` + now.Name + `”, note “` + now.Note +
				`”. What you typed is still in its row: save again to replace that with it.`
		}
	}
	if kept.AddRefused && d.Full {
		// The limit replaces the add form, so the reason keeps what was
		// typed into it.
		problem = "The card was not added. " + d.Limit.String() + ` You typed: address “` + kept.Form.Address + `”, name “` + kept.Form.Name + `”, note “` + kept.Form.Note + `”.`
	}
	if list.Space.Type == actors.SpaceBitcoin {
		d.Targets = append(d.Targets, moveTarget{Value: "portfolio", Label: "Portfolio (as an Account card)"})
		d.Bitcoin = true
		d.Cards, d.Total = s.cardRows(sess, list.Cards)
	}
	d.Targets = append(d.Targets, moveTargets(spaces, id)...)
	if list.Space.Type == actors.SpaceSheet {
		if sheet, err := ask(s, sess, actors.SheetQuery{SpaceID: id, Sparse: true}); err == nil {
			v := sheet
			d.SheetRows, d.SheetMore = len(v.Rows), v.NextOffset != nil
		}
	}
	page.Title, page.Problem, page.Data = list.Space.Name, problem, d
	page.Notice = spaceNotices[string(ctx.QueryArgs().Peek("m"))]
	s.renderPage(ctx, status, "space", page)
}

// moveTargets are the Spaces other than except that a move menu offers:
// every Space that holds cards, of either coin type, so that a refused
// move can say which rule refused it. A Sheet holds no cards.
func moveTargets(spaces actors.SpaceListView, except string) []moveTarget {
	var out []moveTarget
	for _, other := range spaces.Spaces {
		if other.ID != except && other.Type != actors.SpaceSheet {
			out = append(out, moveTarget{Value: "space:" + other.ID, Label: other.Name + " (" + string(other.Type) + " Space)"})
		}
	}
	return out
}

// updateSpaceForm renames a Space or changes its type (which clears its
// agent grant: the page says so before and after).
func (s *Site) updateSpaceForm(ctx *fasthttp.RequestCtx, sess *siteSession) {
	id := pathParam(ctx, "space_id")
	p := &actors.UpdateSpace{SpaceID: id, ExpectedBookmarkRevision: formValue(ctx, "expected_bookmark_revision")}
	notice := "space-saved"
	if name := formValue(ctx, "name"); ctx.PostArgs().Has("name") {
		p.Name = &name
	}
	if typ := actors.SpaceType(formValue(ctx, "type")); typ != "" {
		p.Type, notice = &typ, "space-retyped"
	}
	if _, err := s.siteWrite(sess, p); err != nil {
		kept := spaceKept{RenameRefused: p.Name != nil}
		if p.Name != nil {
			kept.Rename = *p.Name
		}
		s.renderSpace(ctx, sess, s.edge.Status(err.Code), id, kept, spaceRefusal(err))
		return
	}
	s.redirect(ctx, "/spaces/"+url.PathEscape(id)+"?m="+notice)
}

func (s *Site) deleteSpacePage(ctx *fasthttp.RequestCtx, sess *siteSession) {
	id := pathParam(ctx, "space_id")
	r := s.reads(sess)
	list := read(r, actors.ListBookmarksQuery{SpaceID: id})
	all := read(r, actors.ListSpacesQuery{})
	_, page := r.layout("spaces")
	if r.failed(ctx) {
		return
	}
	page.Title, page.Narrow = "Delete a Space", true
	page.Data = spaceData{Space: list.Space, Cards: withoutBalances(list.Cards), Revision: all.BookmarkRevision}
	s.renderPage(ctx, fasthttp.StatusOK, "space_delete", page)
}

func (s *Site) deleteSpaceForm(ctx *fasthttp.RequestCtx, sess *siteSession) {
	id := pathParam(ctx, "space_id")
	_, err := s.siteWrite(sess, &actors.DeleteSpace{SpaceID: id, ExpectedBookmarkRevision: formValue(ctx, "expected_bookmark_revision"),
		ExpectedVersion: formValue(ctx, "expected_version"), ConfirmDeleteCards: formValue(ctx, "confirm_delete_cards") == "true"})
	if err != nil {
		s.renderSpace(ctx, sess, s.edge.Status(err.Code), id, spaceKept{}, "The Space was not deleted: "+spaceRefusal(err))
		return
	}
	s.redirect(ctx, "/spaces?m=space-deleted")
}

func (s *Site) addBookmarkForm(ctx *fasthttp.RequestCtx, sess *siteSession) {
	id := pathParam(ctx, "space_id")
	form := readCardForm(ctx)
	p := &actors.CreateBookmarkCard{CardID: s.store.NewID(), SpaceID: id, ExpectedSpaceVersion: formValue(ctx, "expected_space_version"), Address: form.Address, CardFields: form.fields()}
	coin := formValue(ctx, "coin_id")
	if coin != "" {
		p.CoinID = &coin
	}
	if _, err := s.siteWrite(sess, p); err != nil {
		// A full Space is answered with the limit's words (renderSpace).
		s.renderSpace(ctx, sess, s.edge.Status(err.Code), id, spaceKept{Form: form, Coin: coin, AddRefused: true}, "The card was not added: "+spaceRefusal(err))
		return
	}
	s.redirect(ctx, "/spaces/"+url.PathEscape(id)+"?m=bookmark-added")
}

func (s *Site) editBookmarkForm(ctx *fasthttp.RequestCtx, sess *siteSession) {
	id := pathParam(ctx, "space_id")
	form := readCardForm(ctx)
	_, err := s.siteWrite(sess, &actors.UpdateBookmarkCard{SpaceID: id, CardID: pathParam(ctx, "card_id"), ExpectedVersion: formValue(ctx, "expected_version"), CardFields: form.fields()})
	if err != nil {
		s.renderSpace(ctx, sess, s.edge.Status(err.Code), id, spaceKept{EditCard: pathParam(ctx, "card_id"), Edit: form, EditStale: err.Code == actors.CodeStaleVersion}, "The card was not saved: "+spaceRefusal(err))
		return
	}
	s.redirect(ctx, "/spaces/"+url.PathEscape(id)+"?m=bookmark-saved")
}

func (s *Site) deleteBookmarkForm(ctx *fasthttp.RequestCtx, sess *siteSession) {
	id := pathParam(ctx, "space_id")
	_, err := s.siteWrite(sess, &actors.DeleteBookmarkCard{SpaceID: id, CardID: pathParam(ctx, "card_id"), ExpectedVersion: formValue(ctx, "expected_version")})
	if err != nil {
		s.renderSpace(ctx, sess, s.edge.Status(err.Code), id, spaceKept{}, "The card was not deleted: "+spaceRefusal(err))
		return
	}
	s.redirect(ctx, "/spaces/"+url.PathEscape(id)+"?m=bookmark-gone")
}

// moveForm moves a card between Spaces, or between a Space and the
// Portfolio, with the versions of the page it was sent from.
func (s *Site) moveForm(ctx *fasthttp.RequestCtx, sess *siteSession) {
	from := formValue(ctx, "source_space_id") // "" for an Account card
	p := &actors.MoveCard{NewCardID: s.store.NewID(), SourceID: formValue(ctx, "source_id"), ExpectedSourceVersion: formValue(ctx, "expected_source_version")}
	if from == "" {
		p.SourceKind = actors.LocationPortfolio
	} else {
		p.SourceKind, p.SourceSpaceID = actors.LocationBookmark, from
	}
	to := formValue(ctx, "destination")
	back := "/portfolio"
	if from != "" {
		back = "/spaces/" + url.PathEscape(from)
	}
	switch {
	case to == "portfolio":
		p.DestinationKind = actors.LocationPortfolio
	case len(to) > len("space:") && to[:len("space:")] == "space:":
		p.DestinationKind, p.DestinationSpaceID = actors.LocationBookmark, to[len("space:"):]
		// The destination's version as it is now: the move rules judge
		// the card; the destination may have changed since the page.
		res, err := ask(s, sess, actors.GetSpaceQuery{SpaceID: p.DestinationSpaceID})
		if err != nil {
			s.moveRefused(ctx, sess, from, err)
			return
		}
		v := res.Space.Version
		p.ExpectedDestinationVersion = &v
	default:
		s.moveRefused(ctx, sess, from, actors.Errorf(actors.CodeValidation, "choose where to move the card"))
		return
	}
	if _, err := s.siteWrite(sess, p); err != nil {
		s.moveRefused(ctx, sess, from, err)
		return
	}
	s.redirect(ctx, back+"?m=moved")
}

func (s *Site) moveRefused(ctx *fasthttp.RequestCtx, sess *siteSession, from string, err *actors.Error) {
	problem := "The card was not moved: " + moveRefusal(err)
	if from == "" {
		s.renderPortfolio(ctx, sess, s.edge.Status(err.Code), cardForm{}, problem, false)
		return
	}
	s.renderSpace(ctx, sess, s.edge.Status(err.Code), from, spaceKept{}, problem)
}

// moveRefusal explains the move rule that refused a move.
func moveRefusal(err *actors.Error) string {
	switch err.Code {
	case actors.CodeCrossTypeMove:
		return "a card moves only between places that hold the same kind of address: Bitcoin cards between the Portfolio and Bitcoin Spaces, altcoin cards between altcoin Spaces, and no card into a Sheet Space. (" + err.Message + ")"
	case actors.CodeBookmarkFull:
		return "the destination Space already holds its 10 cards. Delete or move one out of it first. (" + err.Message + ")"
	case actors.CodeOverviewFull:
		return "the Portfolio already holds the plan's Account cards. Delete one first. (" + err.Message + ")"
	case actors.CodeStaleVersion:
		return "the card or the destination changed after this page was drawn (an agent, or another page). Look at it again below and move it again if you still mean to."
	}
	return err.Message
}

// spaceRefusal says why a Space or bookmark write was refused.
func spaceRefusal(err *actors.Error) string {
	switch err.Code {
	case actors.CodeStaleVersion:
		return "it changed after this page was drawn (an agent, or another page); what it holds now is shown below. Try again."
	case actors.CodeBookmarkFull:
		return "this Space already holds its 10 cards. (" + err.Message + ")"
	}
	return err.Message
}
