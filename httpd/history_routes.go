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

var historyOperations = []operation{
	{id: "getHistory", method: fasthttp.MethodGet, path: "/history", apis: bothAPIs,
		response: typeOf[combinedView](), status: fasthttp.StatusOK,
		serve: (*Server).combinedHistory},
	{id: "listHistoryCards", method: fasthttp.MethodGet, path: "/history/cards", apis: bothAPIs,
		response: answerOf(actors.HistoryCardsQuery{}), status: fasthttp.StatusOK,
		serve: func(s *Server, r *request) error {
			return s.readWith(r, func() (actors.Query, error) {
				if err := onlyParams(r.ctx); err != nil {
					return nil, err
				}
				return actors.HistoryCardsQuery{}, nil
			})
		}},
	{id: "listCardTransactions", method: fasthttp.MethodGet, path: "/history/cards/{card_id}/transactions", apis: bothAPIs,
		response: typeOf[transactionsView](), status: fasthttp.StatusOK,
		serve: (*Server).cardTransactions},
	{id: "readNotes", method: fasthttp.MethodPost, path: "/history/notes/batch", apis: bothAPIs, pinned: true,
		request: typeOf[notesBatchRequest](), response: answerOf(actors.NotesBatchQuery{}), status: fasthttp.StatusOK,
		serve: func(s *Server, r *request) error {
			return s.readWith(r, func() (actors.Query, error) {
				var req notesBatchRequest
				if err := decodeBody(r.ctx, &req, cardBodyBytesMax); err != nil {
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
		}},
	{id: "putNote", method: fasthttp.MethodPut, path: "/history/notes/{txid}", apis: bothAPIs,
		request: typeOf[noteRequest](), response: typeOf[actors.NoteView](), status: fasthttp.StatusOK,
		serve: (*Server).putNote},
	{id: "deleteNote", method: fasthttp.MethodDelete, path: "/history/notes/{txid}", apis: bothAPIs, idempotent: true,
		response: typeOf[actors.DeletedView](), status: fasthttp.StatusOK,
		serve: func(s *Server, r *request) error {
			return s.write(r, writeSpec{payload: func(ctx *fasthttp.RequestCtx, _ string) (actors.Payload, error) {
				txid, err := pathTxID(ctx)
				if err != nil {
					return nil, err
				}
				return &actors.DeleteNote{TxID: txid}, nil
			}})
		}},
}

// notesBatchRequest is the body of POST /history/notes/batch.
type notesBatchRequest struct {
	TxIDs []*string `json:"txids"`
}

// noteRequest is the body of PUT /history/notes/{txid}.
type noteRequest struct {
	Note *string `json:"note"`
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
func (s *Server) notesFor(c context.Context, r *request, txs []txView, rc ReadConsistency) (map[string]string, error) {
	if len(txs) == 0 {
		return nil, nil
	}
	ids := make([]string, len(txs))
	for i, t := range txs {
		ids[i] = t.TxID
	}
	res, err := ask(c, s, r, actors.TxNotesQuery{TxIDs: ids}, rc)
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

func (s *Server) cardTransactions(r *request) error {
	if err := s.bearer(r); err != nil {
		return err
	}
	ctx := r.ctx
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
	c, cancel := readContext(upstreamTimeout)
	defer cancel()
	v, err := s.cardTransactionsView(c, r, pathParam(ctx, "card_id"), offset, limit, r.consistency)
	if err != nil {
		return err
	}
	return answer(ctx, fasthttp.StatusOK, v)
}

// cardTransactionsView is a page of one card's History with its notes,
// for the API and the site.
func (s *Server) cardTransactionsView(c context.Context, r *request, cardID string, offset, limit int, rc ReadConsistency) (transactionsView, error) {
	res, err := ask(c, s, r, actors.HistoryCardQuery{CardID: cardID}, rc)
	if err != nil {
		return transactionsView{}, err
	}
	hc := res
	w := actors.HistoryWindowAt(s.now())
	page := s.pageFor(chain.WithAccount(c, r.cred.AccountID), hc.Card.Address, hc.Plan, w, offset, limit, false)
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
	notes, err := s.notesFor(c, r, v.Transactions, rc)
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

func (s *Server) combinedHistory(r *request) error {
	if err := s.bearer(r); err != nil {
		return err
	}
	ctx := r.ctx
	if err := onlyParams(ctx, "force_refresh"); err != nil {
		return err
	}
	force, err := queryBool(ctx, "force_refresh")
	if err != nil {
		return err
	}
	c, cancel := readContext(upstreamTimeout)
	defer cancel()
	v, err := s.combinedHistoryView(c, r, force, r.consistency)
	if err != nil {
		return err
	}
	return answer(ctx, fasthttp.StatusOK, v)
}

// combinedHistoryView is the combined History of the caller's readable
// cards with their notes, for the API and the site.
func (s *Server) combinedHistoryView(c context.Context, r *request, force bool, rc ReadConsistency) (combinedView, error) {
	res, err := ask(c, s, r, actors.HistoryCardsQuery{}, rc)
	if err != nil {
		return combinedView{}, err
	}
	hc := res
	w := actors.HistoryWindowAt(s.now())
	pages := s.pagesFor(chain.WithAccount(c, r.cred.AccountID), hc.Cards, hc.Plan, w, combinedTxsMax, force)
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
	notes, err := s.notesFor(c, r, v.Transactions, rc)
	if err != nil {
		return combinedView{}, err
	}
	annotate(v.Transactions, notes)
	if err := s.addBalances(c, r, &v, hc.Cards, rc); err != nil {
		return combinedView{}, err
	}
	v.HistoryExport = exportFor(hc.Plan, w, v.Complete, preview && len(v.Transactions) > 0, false)
	return v, nil
}

// putNote verifies the transaction against the upstream, works out whether
// a base-plan account may start a note on it, and proposes the write with
// those facts. Nothing is written when the transaction is unknown (404) or
// the upstream cannot tell (503).
func (s *Server) putNote(r *request) error {
	if err := s.bearer(r); err != nil {
		return err
	}
	ctx := r.ctx
	txid, err := pathTxID(ctx)
	if err != nil {
		return err
	}
	var req noteRequest
	if err := decodeBody(ctx, &req, cardBodyBytesMax); err != nil {
		return err
	}
	if req.Note == nil {
		return required("note")
	}
	if err := actors.ValidateNoteText(*req.Note); err != nil {
		return err
	}
	c, cancel := readContext(upstreamTimeout)
	defer cancel()
	res, err := s.saveNote(c, r, nil, txid, *req.Note)
	if err != nil {
		return err
	}
	return writeResult(ctx, res)
}

// saveNote verifies txid against the upstream and proposes the note, for
// the note route, the site and the label import: an unknown transaction
// is NOT_FOUND, an upstream that cannot say is HTTP_ERROR, and the rule
// decides the rest. who is the acting principal when the caller already
// authenticated it; nil, the note context's one query authenticates r's credential
// too, and refuses a read-only key as every write does.
func (s *Server) saveNote(c context.Context, r *request, who *actors.Principal, txid, text string) (actors.Result, error) {
	res, err := ask(c, s, r, actors.NoteContextQuery{}, ReadLeader)
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
	note, err := s.verifiedNote(c, r.cred.AccountID, nc, txid, text)
	if err != nil {
		return actors.Result{}, err
	}
	return s.propose(c, &actors.Command{Account: r.cred.AccountID, At: s.now().UnixNano(), Principal: *who, Payload: note})
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
