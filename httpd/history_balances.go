package httpd

import (
	"context"
	"errors"

	"github.com/addrwatch/addrwatch/actors"
	"github.com/addrwatch/addrwatch/httpd/balances"
	"github.com/addrwatch/addrwatch/httpd/views"
)

// The balances of the combined History: each readable Account card's, the
// Portfolio's total, and the bitcoin Spaces the caller may read with
// their cards' balances and totals. Which cards and Spaces are readable is
// the actors' queries' answer (grants, effective access, the plan's
// Spaces), so a hidden card is never asked about, summed or named.

// addBalances fills v's balance fields for the Account cards the History
// holds (v.Cards, in the order of cards).
func (s *Server) addBalances(c context.Context, r *request, v *combinedView, cards []actors.HistoryCardView, rc ReadConsistency) error {
	spaces, err := s.bitcoinSpaces(c, r, rc)
	if err != nil {
		return err
	}
	addresses := make([]string, 0, len(cards))
	for _, card := range cards {
		addresses = append(addresses, card.Address)
	}
	for _, sp := range spaces {
		for _, card := range sp.Cards {
			addresses = append(addresses, card.Address)
		}
	}
	results := balances.Read(c, s.balances, r.cred.AccountID, addresses)
	each, total := balances.Summarize(results[:len(cards)])
	for i := range v.Cards {
		v.Cards[i].Balance = each[i]
	}
	v.PortfolioTotal, v.Spaces = total, make([]views.SpaceBalances, 0, len(spaces))
	results = results[len(cards):]
	for _, sp := range spaces {
		each, total := balances.Summarize(results[:len(sp.Cards)])
		results = results[len(sp.Cards):]
		out := views.SpaceBalances{SpaceID: sp.Space.ID, Name: sp.Space.Name, Cards: make([]views.SpaceCardBalance, len(sp.Cards)), Total: total}
		for i, card := range sp.Cards {
			out.Cards[i] = views.SpaceCardBalance{CardID: card.ID, Address: card.Address, Name: card.Name, Balance: each[i]}
		}
		v.Spaces = append(v.Spaces, out)
	}
	return nil
}

// bitcoinSpaces are the bitcoin Spaces the caller may read, with their
// cards (which inherit the Space's grant). A Space hidden between the two
// reads is left out, as if the list had been read after.
func (s *Server) bitcoinSpaces(c context.Context, r *request, rc ReadConsistency) ([]actors.BookmarkListView, error) {
	list, err := ask(c, s, r, actors.ListSpacesQuery{}, rc)
	if err != nil {
		return nil, err
	}
	var out []actors.BookmarkListView
	for _, sp := range list.Spaces {
		if sp.Type != actors.SpaceBitcoin {
			continue
		}
		cards, err := ask(c, s, r, actors.ListBookmarksQuery{SpaceID: sp.ID}, rc)
		var refused *actors.Error
		switch {
		case errors.As(err, &refused) && refused.Code == actors.CodeNotFound:
			continue
		case err != nil:
			return nil, err
		}
		out = append(out, cards)
	}
	return out, nil
}
