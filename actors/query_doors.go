package actors

// The untyped doors of the typed queries: the actor runs a Query without
// knowing its answer's type, and each door hands on its typed answer.

func (q AccessPanelQuery) run(a *Account, who Principal, c Level, now int64) Result {
	return answered(q.answer(a, who, c, now))
}
func (q ActivityQuery) run(a *Account, who Principal, c Level, now int64) Result {
	return answered(q.answer(a, who, c, now))
}
func (q ListBookmarksQuery) run(a *Account, who Principal, c Level, now int64) Result {
	return answered(q.answer(a, who, c, now))
}
func (q GetBookmarkQuery) run(a *Account, who Principal, c Level, now int64) Result {
	return answered(q.answer(a, who, c, now))
}
func (q ValidateBookmarkQuery) run(a *Account, who Principal, c Level, now int64) Result {
	return answered(q.answer(a, who, c, now))
}
func (q CredentialUseQuery) run(a *Account, who Principal, c Level, now int64) Result {
	return answered(q.answer(a, who, c, now))
}
func (q EventsQuery) run(a *Account, who Principal, c Level, now int64) Result {
	return answered(q.answer(a, who, c, now))
}
func (q LabelsQuery) run(a *Account, who Principal, c Level, now int64) Result {
	return answered(q.answer(a, who, c, now))
}
func (q LiveQuery) run(a *Account, who Principal, c Level, now int64) Result {
	return answered(q.answer(a, who, c, now))
}
func (q AccountQuery) run(a *Account, who Principal, c Level, now int64) Result {
	return answered(q.answer(a, who, c, now))
}
func (q HistorySearchQuery) run(a *Account, who Principal, c Level, now int64) Result {
	return answered(q.answer(a, who, c, now))
}
func (q ExplorerQuery) run(a *Account, who Principal, c Level, now int64) Result {
	return answered(q.answer(a, who, c, now))
}
func (q ValidateMoveQuery) run(a *Account, who Principal, c Level, now int64) Result {
	return answered(q.answer(a, who, c, now))
}
func (q NotesBatchQuery) run(a *Account, who Principal, c Level, now int64) Result {
	return answered(q.answer(a, who, c, now))
}
func (q TxNotesQuery) run(a *Account, who Principal, c Level, now int64) Result {
	return answered(q.answer(a, who, c, now))
}
func (q HistoryCardsQuery) run(a *Account, who Principal, c Level, now int64) Result {
	return answered(q.answer(a, who, c, now))
}
func (q NoteContextQuery) run(a *Account, who Principal, c Level, now int64) Result {
	return answered(q.answer(a, who, c, now))
}
func (q HistoryCardQuery) run(a *Account, who Principal, c Level, now int64) Result {
	return answered(q.answer(a, who, c, now))
}
func (q AuthQuery) run(a *Account, who Principal, c Level, now int64) Result {
	return answered(q.answer(a, who, c, now))
}
func (q PasswordHashQuery) run(a *Account, who Principal, c Level, now int64) Result {
	return answered(q.answer(a, who, c, now))
}
func (q MeQuery) run(a *Account, who Principal, c Level, now int64) Result {
	return answered(q.answer(a, who, c, now))
}
func (q ListPortfolioQuery) run(a *Account, who Principal, c Level, now int64) Result {
	return answered(q.answer(a, who, c, now))
}
func (q GetPortfolioCardQuery) run(a *Account, who Principal, c Level, now int64) Result {
	return answered(q.answer(a, who, c, now))
}
func (q ValidateCreatePortfolioCardQuery) run(a *Account, who Principal, c Level, now int64) Result {
	return answered(q.answer(a, who, c, now))
}
func (q ListKeysQuery) run(a *Account, who Principal, c Level, now int64) Result {
	return answered(q.answer(a, who, c, now))
}
func (q SheetQuery) run(a *Account, who Principal, c Level, now int64) Result {
	return answered(q.answer(a, who, c, now))
}
func (q ListSpacesQuery) run(a *Account, who Principal, c Level, now int64) Result {
	return answered(q.answer(a, who, c, now))
}
func (q GetSpaceQuery) run(a *Account, who Principal, c Level, now int64) Result {
	return answered(q.answer(a, who, c, now))
}
func (q AccountSummaryQuery) run(a *Account, who Principal, c Level, now int64) Result {
	return answered(q.answer(a, who, c, now))
}
func (q WatchTargetsQuery) run(a *Account, who Principal, c Level, now int64) Result {
	return answered(q.answer(a, who, c, now))
}
func (q AddressRecordQuery) run(a *Account, who Principal, c Level, now int64) Result {
	return answered(q.answer(a, who, c, now))
}
func (q WatchedQuery) run(a *Account, who Principal, c Level, now int64) Result {
	return answered(q.answer(a, who, c, now))
}
func (q ChainActivityQuery) run(a *Account, who Principal, c Level, now int64) Result {
	return answered(q.answer(a, who, c, now))
}
func (q DeepeningQuery) run(a *Account, who Principal, c Level, now int64) Result {
	return answered(q.answer(a, who, c, now))
}
func (q NotifyChannelsQuery) run(a *Account, who Principal, c Level, now int64) Result {
	return answered(q.answer(a, who, c, now))
}
func (q NotifyChannelQuery) run(a *Account, who Principal, c Level, now int64) Result {
	return answered(q.answer(a, who, c, now))
}
func (q NotifyRulesQuery) run(a *Account, who Principal, c Level, now int64) Result {
	return answered(q.answer(a, who, c, now))
}
func (q DueDeliveriesQuery) run(a *Account, who Principal, c Level, now int64) Result {
	return answered(q.answer(a, who, c, now))
}
func (q OutboxQuery) run(a *Account, who Principal, c Level, now int64) Result {
	return answered(q.answer(a, who, c, now))
}
func (q DeliveryLogQuery) run(a *Account, who Principal, c Level, now int64) Result {
	return answered(q.answer(a, who, c, now))
}
func (q ChainCentreQuery) run(a *Account, who Principal, c Level, now int64) Result {
	return answered(q.answer(a, who, c, now))
}
func (q ChainUnseenQuery) run(a *Account, who Principal, c Level, now int64) Result {
	return answered(q.answer(a, who, c, now))
}
func (q LastChainEventsQuery) run(a *Account, who Principal, c Level, now int64) Result {
	return answered(q.answer(a, who, c, now))
}
func (q NotifiedCardsQuery) run(a *Account, who Principal, c Level, now int64) Result {
	return answered(q.answer(a, who, c, now))
}
