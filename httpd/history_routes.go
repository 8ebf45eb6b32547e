package httpd

import (
	"context"
	"errors"
	"strconv"

	"github.com/valyala/fasthttp"

	"github.com/addrwatch/addrwatch/actors"
	"github.com/addrwatch/addrwatch/chain"
	"github.com/addrwatch/addrwatch/httpd/views"
)

// History and note routes, shared by the agent API and the owner API. The
// upstream is read here, at the edge; what a note write learned from it
// travels inside the command.

const notesBatchMax = 100 // txids per batch read

func (s *Server) registerHistory(r routeAdder, prefix string, aud audience) {
	r.GET(prefix+"/history", handle(func(ctx *fasthttp.RequestCtx) error { return s.combinedHistory(ctx, aud) }))
	r.GET(prefix+"/history/cards", func(ctx *fasthttp.RequestCtx) {
		s.readWith(ctx, aud, func() (actors.Query, error) {
			if err := onlyParams(ctx); err != nil {
				return nil, err
			}
			return actors.HistoryCardsQuery{}, nil
		})
	})
	r.GET(prefix+"/history/cards/{card_id}/transactions", handle(func(ctx *fasthttp.RequestCtx) error { return s.cardTransactions(ctx, aud) }))
	onlyMethods(r, prefix+"/history/notes/batch", fasthttp.MethodPost)
	r.POST(prefix+"/history/notes/batch", func(ctx *fasthttp.RequestCtx) {
		s.readWith(ctx, aud, func() (actors.Query, error) {
			var req struct {
				TxIDs []*string `json:"txids"`
			}
			if err := decodeBody(ctx, &req, cardBodyBytesMax); err != nil {
				return nil, err
			}
			if req.TxIDs == nil {
				return nil, required("txids")
			}
			if len(req.TxIDs) > notesBatchMax {
				return nil, actors.Errorf(actors.CodeValidation, "txids may hold at most %d transaction IDs", notesBatchMax)
			}
			txids := make([]string, len(req.TxIDs))
			for i, t := range req.TxIDs {
				id, valid := "", false
				if t != nil {
					id, valid = chain.CanonicalTxID(*t)
				}
				if !valid {
					return nil, actors.Errorf(actors.CodeValidation, "txids[%d] must be a 64-character hexadecimal transaction ID", i)
				}
				txids[i] = id
			}
			return actors.NotesBatchQuery{TxIDs: txids}, nil
		})
	})
	r.PUT(prefix+"/history/notes/{txid}", handle(func(ctx *fasthttp.RequestCtx) error { return s.putNote(ctx, aud) }))
	r.DELETE(prefix+"/history/notes/{txid}", func(ctx *fasthttp.RequestCtx) {
		s.write(ctx, aud, writeSpec{idempotent: true, payload: func(ctx *fasthttp.RequestCtx, _ string) (actors.Payload, error) {
			txid, err := pathTxID(ctx)
			if err != nil {
				return nil, err
			}
			return &actors.DeleteNote{TxID: txid}, nil
		}})
	})
}

func pathTxID(ctx *fasthttp.RequestCtx) (string, error) {
	return views.TxID(pathParam(ctx, "txid"))
}

// onlyParams refuses any query parameter not named.
func onlyParams(ctx *fasthttp.RequestCtx, names ...string) error {
	seen := map[string]bool{}
	for k := range ctx.QueryArgs().All() {
		key := string(k)
		switch {
		case seen[key]:
			return actors.Errorf(actors.CodeValidation, "query parameter %q appears more than once", truncate(key))
		case !contains(names, key):
			return actors.Errorf(actors.CodeValidation, "unknown query parameter %q", truncate(key))
		}
		seen[key] = true
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// queryBool parses an optional boolean query parameter.
func queryBool(ctx *fasthttp.RequestCtx, name string) (bool, error) {
	v := ctx.QueryArgs().Peek(name)
	if v == nil {
		return false, nil
	}
	b, err := strconv.ParseBool(string(v))
	if err != nil {
		return false, actors.Errorf(actors.CodeValidation, "%s must be true or false", name)
	}
	return b, nil
}

// historyOffset is the offset parameter of a page of one card's History,
// which the site's History pages read the API's way.
func historyOffset(ctx *fasthttp.RequestCtx) (int, error) {
	return queryIntDefault(ctx, "offset", 0, 0, 1<<30)
}

// queryIntDefault parses an optional integer query parameter.
func queryIntDefault(ctx *fasthttp.RequestCtx, name string, def, lo, hi int) (int, error) {
	if !ctx.QueryArgs().Has(name) {
		return def, nil
	}
	return queryInt(name, string(ctx.QueryArgs().Peek(name)), lo, hi)
}

// notesFor returns the notes the caller may read for the transactions.
func (s *Server) notesFor(c context.Context, cred actors.Credential, txs []txView, rc ReadConsistency) (map[string]string, error) {
	if len(txs) == 0 {
		return nil, nil
	}
	ids := make([]string, len(txs))
	for i, t := range txs {
		ids[i] = t.TxID
	}
	res, err := ask(c, s.store, cred, actors.TxNotesQuery{TxIDs: ids}, rc)
	if err != nil {
		return nil, err
	}
	notes := map[string]string{}
	for _, n := range res.Notes {
		notes[n.TxID] = n.Note
	}
	return notes, nil
}

func annotate(txs []txView, notes map[string]string) {
	for i := range txs {
		if n, found := notes[txs[i].TxID]; found {
			txs[i].Note = &n
		}
	}
}

// transactionsView is the body of GET /history/cards/{card_id}/transactions.
type transactionsView = views.Transactions

func (s *Server) cardTransactions(ctx *fasthttp.RequestCtx, aud audience) error {
	cred, err := s.credential(ctx, aud)
	if err != nil {
		return err
	}
	if err := onlyParams(ctx, "limit", "offset"); err != nil {
		return err
	}
	limit, err := queryIntDefault(ctx, "limit", historyLimitDefault, 1, historyLimitMax)
	if err != nil {
		return err
	}
	offset, err := historyOffset(ctx)
	if err != nil {
		return err
	}
	c, cancel := readContext(ctx, upstreamTimeout)
	defer cancel()
	v, err := s.cardTransactionsView(c, cred, pathParam(ctx, "card_id"), offset, limit, consistencyOf(ctx))
	if err != nil {
		return err
	}
	writeJSON(ctx, fasthttp.StatusOK, v)
	return nil
}

// cardTransactionsView is a page of one card's History with its notes,
// for the API and the site.
func (s *Server) cardTransactionsView(c context.Context, cred actors.Credential, cardID string, offset, limit int, rc ReadConsistency) (transactionsView, error) {
	res, err := ask(c, s.store, cred, actors.HistoryCardQuery{CardID: cardID}, rc)
	if err != nil {
		return transactionsView{}, err
	}
	hc := res
	w := actors.HistoryWindowAt(s.now())
	page := s.pageFor(chain.WithAccount(c, cred.AccountID), hc.Card.Address, hc.Plan, w, offset, limit, false)
	v := transactionsView{CardID: hc.Card.ID, Address: hc.Card.Address, Offset: offset, Limit: limit, Transactions: []txView{}}
	if upstreamFailed(page.err) {
		// Degraded: say so, and point the client back at the same page.
		v.HistoryDegraded, v.NextOffset = true, &offset
		v.HistoryExport = exportFor(hc.Plan, w, false, false, false)
		return v, nil
	}
	for _, tx := range page.txs {
		v.Transactions = append(v.Transactions, renderTx(tx, hc.Card.Address))
	}
	notes, err := s.notesFor(c, cred, v.Transactions, rc)
	if err != nil {
		return transactionsView{}, err
	}
	annotate(v.Transactions, notes)
	v.HasMore = page.hasMore
	if page.hasMore {
		next := offset + len(page.txs)
		v.NextOffset = &next
	}
	total := page.totalCount
	v.TotalCount = &total
	v.Complete = !page.ceilingReached
	v.HistoryExport = exportFor(hc.Plan, w, v.Complete, page.olderPreview, page.ceilingReached)
	return v, nil
}

// combinedCardView is one card in the combined History summary.
type combinedCardView = views.CombinedCard

// combinedView is the body of GET /history.
type combinedView = views.Combined

func (s *Server) combinedHistory(ctx *fasthttp.RequestCtx, aud audience) error {
	cred, err := s.credential(ctx, aud)
	if err != nil {
		return err
	}
	if err := onlyParams(ctx, "force_refresh"); err != nil {
		return err
	}
	force, err := queryBool(ctx, "force_refresh")
	if err != nil {
		return err
	}
	c, cancel := readContext(ctx, upstreamTimeout)
	defer cancel()
	v, err := s.combinedHistoryView(c, cred, force, consistencyOf(ctx))
	if err != nil {
		return err
	}
	writeJSON(ctx, fasthttp.StatusOK, v)
	return nil
}

// combinedHistoryView is the combined History of the caller's readable
// cards with their notes, for the API and the site.
func (s *Server) combinedHistoryView(c context.Context, cred actors.Credential, force bool, rc ReadConsistency) (combinedView, error) {
	res, err := ask(c, s.store, cred, actors.HistoryCardsQuery{}, rc)
	if err != nil {
		return combinedView{}, err
	}
	hc := res
	w := actors.HistoryWindowAt(s.now())
	pages := s.pagesFor(chain.WithAccount(c, cred.AccountID), hc.Cards, hc.Plan, w, combinedTxsMax, force)
	v := combinedView{Cards: make([]combinedCardView, len(hc.Cards)), Complete: true}
	lists := make([][]chain.Tx, len(pages))
	allQuiet := true // no included card has activity in the window
	for i, p := range pages {
		card := hc.Cards[i]
		cv := combinedCardView{CardID: card.ID, Address: card.Address, Name: card.Name}
		if upstreamFailed(p.err) {
			cv.HistoryDegraded, v.HistoryDegraded, v.Complete = true, true, false
			allQuiet = false // unknown activity: no preview on partial knowledge
		} else {
			total, balance := p.totalCount, p.stats.Balance()
			cv.TotalCount, cv.BalanceSat = &total, &balance
			if hc.Plan == actors.PlanBase {
				recent := p.recentCount
				cv.RecentCount = &recent
				allQuiet = allQuiet && recent == 0
			}
			lists[i] = p.txs
			if p.ceilingReached {
				v.Complete = false
			}
		}
		v.Cards[i] = cv
	}
	preview := false
	if hc.Plan == actors.PlanBase {
		// The older preview shows only when every included card is quiet;
		// otherwise older transactions stay out of the combined view.
		preview = allQuiet && len(hc.Cards) > 0
		for i, p := range pages {
			if !preview && p.olderPreview {
				lists[i] = nil
			}
		}
	}
	v.Transactions = mergeTxs(hc.Cards, lists, combinedTxsMax)
	notes, err := s.notesFor(c, cred, v.Transactions, rc)
	if err != nil {
		return combinedView{}, err
	}
	annotate(v.Transactions, notes)
	v.HistoryExport = exportFor(hc.Plan, w, v.Complete, preview && len(v.Transactions) > 0, false)
	return v, nil
}

// putNote verifies the transaction against the upstream, works out whether
// a base-plan account may start a note on it, and proposes the write with
// those facts. Nothing is written when the transaction is unknown (404) or
// the upstream cannot tell (503).
func (s *Server) putNote(ctx *fasthttp.RequestCtx, aud audience) error {
	cred, err := s.credential(ctx, aud)
	if err != nil {
		return err
	}
	txid, err := pathTxID(ctx)
	if err != nil {
		return err
	}
	var req struct {
		Note *string `json:"note"`
	}
	if err := decodeBody(ctx, &req, cardBodyBytesMax); err != nil {
		return err
	}
	if req.Note == nil {
		return required("note")
	}
	if err := actors.ValidateNoteText(*req.Note); err != nil {
		return err
	}
	c, cancel := readContext(ctx, upstreamTimeout)
	defer cancel()
	res, err := s.saveNote(c, cred, nil, txid, *req.Note)
	if err != nil {
		return err
	}
	writeResult(ctx, res)
	return nil
}

// saveNote verifies txid against the upstream and proposes the note, for
// the note route, the site and the label import: an unknown transaction
// is NOT_FOUND, an upstream that cannot say is HTTP_ERROR, and the rule
// decides the rest. who is the acting principal when the caller already
// authenticated it; nil, the note context's one query authenticates cred
// too, and refuses a read-only key as every write does.
func (s *Server) saveNote(c context.Context, cred actors.Credential, who *actors.Principal, txid, text string) (actors.Result, error) {
	res, err := ask(c, s.store, cred, actors.NoteContextQuery{}, ReadLeader)
	if err != nil {
		return actors.Result{}, err
	}
	nc := res
	if who == nil {
		if nc.Principal.Kind == actors.PrincipalAgent && nc.Capability < actors.LevelWrite {
			return actors.Result{}, errReadOnlyKey
		}
		who = &nc.Principal
	}
	note, err := s.verifiedNote(c, cred.AccountID, nc, txid, text)
	if err != nil {
		return actors.Result{}, err
	}
	return s.propose(c, &actors.Command{Account: cred.AccountID, At: s.now().UnixNano(), Principal: *who, Payload: note})
}

// verifiedNote asks the upstream about txid and builds the note write of
// account with what it learned: NOT_FOUND for a transaction the upstream
// does not know, HTTP_ERROR when it cannot say, and whether a base plan
// may start a note on it (nc is the account's note context).
func (s *Server) verifiedNote(c context.Context, account string, nc actors.NoteContextView, txid, text string) (*actors.PutNote, error) {
	// The upstream is asked on behalf of this account: its failures for
	// another account's addresses must not refuse this write (chain's
	// breaker).
	up := chain.WithAccount(c, account)
	tx, uerr := s.history.Tx(up, txid)
	switch {
	case errors.Is(uerr, chain.ErrNotFound):
		return nil, actors.Errorf(actors.CodeNotFound, "unknown transaction")
	case uerr != nil:
		return nil, upstreamUnavailable(uerr)
	}
	eligible, err := s.noteEligible(up, tx, nc)
	if err != nil {
		return nil, err
	}
	return &actors.PutNote{TxID: txid, Text: text, Addresses: tx.Addresses(), Eligible: eligible}, nil
}

// upstreamUnavailable is the 503 of a note write whose transaction the
// upstream could not verify (err says why).
func upstreamUnavailable(err error) error {
	return upstreamError(err, "the transaction could not be verified because the block explorer is unavailable; retry later")
}

// upstreamError is a 503 for an upstream failure, saying when to come
// back: when the upstream, the breaker or the address's cooldown lets a
// call through again, at least a second from now.
func upstreamError(err error, message string) error {
	return &actors.Error{Code: actors.CodeHTTPError, Message: message, RetryAfter: retryAfterSeconds(chain.RetryAfter(err))}
}

// noteEligible decides whether a base-plan account may start a note on tx:
// it is in the mempool, in the latest calendar year, or on the older-preview
// page of an involved card that has nothing in the year. Extended plans may
// note anything.
func (s *Server) noteEligible(c context.Context, tx chain.Tx, nc actors.NoteContextView) (bool, error) {
	w := actors.HistoryWindowAt(s.now())
	eligible, checkPreviews := actors.NoteEligibility(nc.Plan, w, tx)
	if !checkPreviews {
		return eligible, nil
	}
	for _, addr := range nc.Addresses {
		if !tx.Involves(addr) {
			continue
		}
		page, err := s.history.Page(c, addr, 0, actors.OlderPreviewMax, false)
		if upstreamFailed(err) {
			return false, upstreamUnavailable(err)
		}
		if err == nil && actors.OnPreview(w, page.Txs, actors.OlderPreviewMax, tx.TxID) {
			return true, nil
		}
	}
	return false, nil
}
