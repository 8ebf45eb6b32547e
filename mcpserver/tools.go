package mcpserver

import (
	"maps"
	"slices"
)

// tool is what a model is told about one operation, beyond what the
// OpenAPI document says: a name it can call, what the tool does, what it
// needs first, and what its errors mean; and the MCP behaviour hints.
//
// The hints follow the API's semantics, not the HTTP method:
//   - readOnly: changes nothing (the validate operations and the batch note
//     read are POSTs that only read);
//   - destructive: may replace or remove what is already there (an edit,
//     a delete, an overwrite of cells or a note, a move that retires the
//     source ID); a create or a compaction only adds or reorders;
//   - idempotent: the same arguments again change nothing more. Versioned
//     and revisioned writes are (the repeat is refused as stale), and so
//     are upserts by key; a create is not unless the model passes the same
//     idempotency_key, so its hint stays false;
//   - openWorld: the answer depends on the Bitcoin chain, read from the
//     upstream (History, transactions, a note's eligibility).
//
// A read key is not offered a tool that needs a write key: every write,
// and the validate operations, which the spec reserves to write keys.
type tool struct {
	name        string
	title       string
	description string
	readOnly    bool
	destructive bool
	idempotent  bool
	openWorld   bool
	// checksWrite: a read-only operation that still needs a write key.
	checksWrite bool
}

// forReadKeys says whether a read key is offered the tool.
func (t tool) forReadKeys() bool { return t.readOnly && !t.checksWrite }

// tools maps each operationId of /v1 to its tool. The public documents are
// MCP resources, not tools. A test fails when the document gains an
// operation without an entry here, or loses one.
var tools = map[string]tool{
	"getMe": {name: "me", title: "Who am I", readOnly: true, idempotent: true, description: `Read the account view of the API key in use: its capability (read or write), the plan, which Account card and Space IDs it can see, usage against the plan's limits, and the rate-limit budget left.
Call this first: it tells you whether write tools will work at all, and gives the IDs to pass to the other tools. Call it again after an event of kind scope_changed.`},

	"listPortfolioCards": {name: "list_portfolio_cards", title: "List Account cards", readOnly: true, idempotent: true, description: `List the Account cards (Bitcoin addresses in the Portfolio) this key can see, each with its id and version. Cards whose grant is none are left out; usage counts in me still include them.`},
	"createPortfolioCard": {name: "create_portfolio_card", title: "Create an Account card", description: `Create an Account card for a Bitcoin address in the Portfolio. Needs a write key; the account must be under its card limit. The new card has effective_access write.
Errors: DUPLICATE_ADDRESS (the address is already on the account, possibly on a card you cannot see: do not retry), OVERVIEW_FULL (card limit reached: ask the owner), VALIDATION (not a Bitcoin address, or a bad color_key).
Retrying after a timeout or 503: pass the same idempotency_key as the first attempt (it is in the error) so the card is not created twice.`},
	"validatePortfolioCard": {name: "validate_portfolio_card", title: "Check an Account card create", readOnly: true, checksWrite: true, idempotent: true, description: `Check whether create_portfolio_card would accept this body, without creating anything. Returns valid: true, or the same error the create would give. Needs a write key.`},
	"getPortfolioCard":      {name: "get_portfolio_card", title: "Read an Account card", readOnly: true, idempotent: true, description: `Read one Account card by id, including its current version (needed by update and delete). NOT_FOUND means the card does not exist or this key cannot see it.`},
	"updatePortfolioCard": {name: "update_portfolio_card", title: "Edit an Account card", destructive: true, idempotent: true, description: `Change an Account card's name, note or color_key. Send expected_version (the card's version from a recent read) and at least one field to change. Needs a write key and write on the card.
On STALE_VERSION the card changed since you read it: read it again with get_portfolio_card, check it is still the card you meant and your change still makes sense, then retry once with the new version; if it conflicts again, stop and ask the owner.`},
	"deletePortfolioCard": {name: "delete_portfolio_card", title: "Delete an Account card", destructive: true, idempotent: true, description: `Delete an Account card. Send expected_version from a recent read. Needs a write key and write on the card. STALE_VERSION: re-read and confirm before trying again; NOT_FOUND: already gone or not visible.`},

	"listSpaces": {name: "list_spaces", title: "List Spaces", readOnly: true, idempotent: true, description: `List the Spaces this key can see (bitcoin, altcoin and sheet Spaces), with each Space's id, type, version and access, and the account's bookmark_revision (needed to create, rename or delete a Space).`},
	"createSpace": {name: "create_space", title: "Create a Space", description: `Create a Space of type bitcoin, altcoin or sheet, named 1 to 40 printable characters. Send expected_bookmark_revision from list_spaces. Needs a write key, the extended plan, write on at least one existing Space, and fewer than ten Spaces.
Errors: SPACE_FULL (plan limit: ask the owner), FORBIDDEN (base plan or no writable Space), STALE_VERSION (re-read list_spaces, retry once).
Retrying after a timeout or 503: pass the same idempotency_key as the first attempt.`},
	"getSpace":    {name: "get_space", title: "Read a Space", readOnly: true, idempotent: true, description: `Read one Space by id, including its version (needed to add cards to it or move cards into it).`},
	"updateSpace": {name: "rename_space", title: "Rename a Space", destructive: true, idempotent: true, description: `Rename a Space. Send expected_bookmark_revision from list_spaces and the new name. Needs a write key and write on the Space. Changing a Space's type is not possible through the API.`},
	"deleteSpace": {name: "delete_space", title: "Delete a Space and its cards", destructive: true, idempotent: true, description: `Delete a Space together with every card in it. Send the latest bookmark revision, the Space's version and confirm_delete_cards: true. The last remaining Space cannot be deleted, nor a Sheet Space that still has rows. Deleted cards cannot be recovered: confirm with the owner when in doubt.`},

	"listBookmarkCards": {name: "list_bookmark_cards", title: "List a Space's cards", readOnly: true, idempotent: true, description: `List the bookmark cards in a Space, with the Space's current version under space.version (send it as expected_space_version when adding a card).`},
	"createBookmarkCard": {name: "create_bookmark_card", title: "Add a card to a Space", description: `Add a bookmark card to a bitcoin or altcoin Space. Send expected_space_version (from get_space or list_bookmark_cards) and the address; an altcoin Space also needs coin_id (a supported coin, or unknown). Needs a write key and write on the Space.
Errors: BOOKMARK_FULL (the Space is full), DUPLICATE_ADDRESS, STALE_VERSION (the Space changed: re-read it, retry once).
Retrying after a timeout or 503: pass the same idempotency_key as the first attempt.`},
	"validateBookmarkCard": {name: "validate_bookmark_card", title: "Check a card create in a Space", readOnly: true, checksWrite: true, idempotent: true, description: `Check whether create_bookmark_card would accept this body, without adding anything. Returns valid: true or the create's error. Needs a write key.`},
	"getBookmarkCard":      {name: "get_bookmark_card", title: "Read a card in a Space", readOnly: true, idempotent: true, description: `Read one bookmark card of a Space, including its version.`},
	"updateBookmarkCard":   {name: "update_bookmark_card", title: "Edit a card in a Space", destructive: true, idempotent: true, description: `Change a bookmark card's name, note or color_key. Send expected_version from a recent read and at least one field. STALE_VERSION: re-read, check, retry at most once, then ask the owner.`},
	"deleteBookmarkCard":   {name: "delete_bookmark_card", title: "Delete a card in a Space", destructive: true, idempotent: true, description: `Delete a bookmark card from its Space. Send expected_version from a recent read. Needs a write key and write on the Space.`},

	"getSheet": {name: "get_sheet", title: "Read a Sheet", readOnly: true, idempotent: true, description: `Read a Sheet Space: 5 columns (Address, Blockchain, Transaction ID, Date, and a custom fifth) by 1000 row slots, and its revision (needed by every Sheet write).
Dense view (default): limit slots from offset, blanks included. view=sparse, or an address/chain filter (exact, case-sensitive), returns nonempty rows only. Follow next_offset until it is null, keeping the same view and filters; if revision changes between pages, start again at offset 0.`},
	"patchSheet": {name: "patch_sheet", title: "Write Sheet rows or headings by index", destructive: true, idempotent: true, description: `Overwrite Sheet rows by slot index (0 to 999) and/or the headings. Send expected_revision from a recent get_sheet, and rows (1 to 100 entries of index plus exactly 5 cells) and/or headers (all 5; only the fifth may change). Five blank cells empty a slot.
On STALE_VERSION, re-read the Sheet and find your row again by its cells: indexes move after a delete or compaction, so never just retry with the new revision.`},
	"putSheetRow": {name: "upsert_sheet_row", title: "Upsert a Sheet row by Address and Blockchain", destructive: true, idempotent: true, description: `Write one row keyed by its Address and Blockchain cells (the first two of the 5 cells, both nonempty): the unique row with those two cells is updated, or else the first empty slot is used. Send expected_revision from a recent get_sheet.
CONFLICT means more than one row matches, or no row matches and the Sheet is full: do not retry blindly, read the Sheet and decide (or ask the owner). STALE_VERSION: re-read and retry once.`},
	"deleteSheetRow": {name: "delete_sheet_row", title: "Clear a Sheet slot and shift later rows up", destructive: true, idempotent: true, description: `Clear the slot at index and move every later stored row up by one. Send expected_revision. NOT_FOUND means there was nothing to delete or shift. Indexes change: re-read before another indexed write.`},
	"compactSheet":   {name: "compact_sheet", title: "Compact a Sheet", idempotent: true, description: `Move the nonempty rows of a Sheet to the start, keeping their order. Send expected_revision. An already compact Sheet is left as it is (moved_rows 0). Indexes change: re-read before another indexed write.`},

	"moveCard": {name: "move_card", title: "Move a card", destructive: true, idempotent: true, description: `Move a card between the Portfolio and a Space, or between two Spaces. Send source_kind, source_id (and source_space_id for a bookmark card), destination_kind (and destination_space_id for a Space), expected_source_version (the card's version) and expected_destination_version (the destination Space's version; omit it for a move into the Portfolio).
The card gets a new ID: use new_id afterwards. Needs write on the source and the destination. CROSS_TYPE_MOVE: the coin types do not allow this move. Check first with validate_move when unsure.`},
	"validateMove": {name: "validate_move", title: "Check a move", readOnly: true, checksWrite: true, idempotent: true, description: `Check whether move_card would accept this body, without moving anything. Returns valid: true or the move's error. Needs a write key.`},

	"getHistory":           {name: "get_history", title: "Read the combined History and balances", readOnly: true, idempotent: true, openWorld: true, description: `Read a combined summary of the transaction History of every Account card this key can read, with balances: each card's balance (confirmed_sat and unconfirmed_sat apart, received_sat, sent_sat, tx_count, last_tx_at), the Portfolio's total (portfolio_total), and every bitcoin Space this key can read with its cards' balances and its total (spaces). Amounts are satoshis (1 BTC = 100,000,000). A balance with degraded: true is unknown (its figures are null), not zero, and a total with complete: false leaves such cards out. force_refresh: true asks the upstream again instead of using cached results. history_degraded: true means the upstream answered only in part.`},
	"listHistoryCards":     {name: "list_history_cards", title: "List cards with readable History", readOnly: true, idempotent: true, openWorld: true, description: `List the Account cards whose History this key can read.`},
	"listCardTransactions": {name: "list_card_transactions", title: "Page through a card's transactions", readOnly: true, idempotent: true, openWorld: true, description: `Read one page of an Account card's transactions (limit 1 to 100, default 25). Start at offset 0 and pass next_offset back while has_more is true, even when a page is empty. On the base plan only the latest calendar year is shown (history_export says which dates); complete: false or history_degraded: true means the list is not the full History.`},
	"readNotes":            {name: "read_notes", title: "Read transaction notes", readOnly: true, idempotent: true, description: `Read the saved notes of up to many transactions at once: send txids (64 hex characters each). Only notes on transactions of cards this key can read are returned.`},
	"putNote":              {name: "put_note", title: "Save a transaction note", destructive: true, idempotent: true, openWorld: true, description: `Save or replace the note (at most 50 characters) on a transaction. Needs a write key and write on every Account card the transaction involves. On the base plan a new note is allowed only on a recent transaction (see the docs). NOT_FOUND: the transaction is unknown to this key's cards. HTTP_ERROR: the chain could not be checked just now; try again later.`},
	"deleteNote":           {name: "delete_note", title: "Delete a transaction note", destructive: true, idempotent: true, description: `Delete the note on a transaction. Needs a write key and write on every Account card the transaction involves.`},

	"listChainActivity": {name: "list_chain_activity", title: "Poll the chain events of the readable cards", readOnly: true, idempotent: true, openWorld: true, description: `Poll what happened on the Bitcoin chain to the transactions of the cards this key can read: tx_seen (a payment in the mempool), tx_confirmed (in a block; again after a reorg), tx_deep (6 blocks deep), tx_replaced (replaced_by names the replacement), tx_dropped (left the mempool unconfirmed), tx_reorged (its block left the chain: the earlier tx_confirmed no longer holds). Each event names card_id (and space_id for a Space's card), address, txid and amount_sat, the card's net change in satoshis (negative when it pays out). Omit since on the first poll (the past 24 hours); afterwards pass the next_since of the previous answer, and save it even when events is empty. While has_more is true fetch again at once. An event's id is stable: the same id seen twice is the same event, not a second payment. An addrwatch extension, not part of the v1 specification.`},
	"listEvents":        {name: "list_events", title: "Poll the change feed", readOnly: true, idempotent: true, description: `Poll the account's change feed: events say that something changed (portfolio_changed, bookmark_changed, cards_changed, scope_changed), never what. Omit since on the first poll; afterwards pass the next_since of the previous answer. While has_more is true fetch again at once. After scope_changed call me again; after another event re-read the lists concerned.`},
}

// documents are the operations served as MCP resources instead of tools.
var documents = map[string]resourceDoc{
	"getDocs":       {uri: "addrwatch://docs/agent-api", name: "agent-api-guide", title: "The Agent API guide", mime: "text/markdown", description: "How the Agent API works: resources, grants, every endpoint, the rules, errors and limits. Read it before acting on a user's account."},
	"getSheetGuide": {uri: "addrwatch://docs/sheets", name: "sheet-guide", title: "The Sheet guide", mime: "text/markdown", description: "How Sheet Spaces work: the 5 columns, dense and sparse reads, indexed writes, upserts, deletes and compaction."},
	"getOpenAPI":    {uri: "addrwatch://openapi.json", name: "openapi", title: "The Agent API's OpenAPI document", mime: "application/json", description: "The machine-readable description of every operation the tools call."},
}

type resourceDoc struct {
	uri, name, title, mime, description string
}

// ToolOperations are the operationIds of /v1 served as tools, sorted:
// for a check elsewhere (httpd's operation declarations) that every
// operation of the Agent API has its tool.
func ToolOperations() []string { return slices.Sorted(maps.Keys(tools)) }

// ResourceOperations are the operationIds of /v1 served as MCP resources
// (the public documents), sorted.
func ResourceOperations() []string { return slices.Sorted(maps.Keys(documents)) }
