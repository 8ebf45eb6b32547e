package actors

import (
	"encoding/hex"
	"fmt"
	"strconv"

	"github.com/addrwatch/addrwatch/chain"
)

// Account is the whole state of one account. Only the rules in this package
// change it, and only while applying a replicated Command, so every replica
// holds the same Account. Collections are slices in stored order, never maps,
// so that anything rendered from them has one order on every node.
type Account struct {
	ID    string `json:"id"`
	Login string `json:"login,omitempty"` // as the owner typed it; unique across accounts, case-insensitively
	// Network is the Bitcoin network of the account's addresses; empty
	// for mainnet (every account made before networks were recorded).
	Network          chain.Network `json:"network,omitempty"`
	Plan             Plan          `json:"plan"`
	OwnerSecretHash  Hash          `json:"owner_secret_hash"`
	OwnerSecretEpoch uint64        `json:"owner_secret_epoch"` // bumped by each rotation
	PasswordHash     string        `json:"password_hash"`      // salted slow hash, made at the edge
	CreatedAt        int64         `json:"created_at"`
	Deleted          bool          `json:"deleted,omitempty"`
	Seq              uint64        `json:"seq"` // bumped by every accepted change; versions come from it
	Keys             []*APIKey     `json:"keys"`
	Sessions         []*Session    `json:"sessions"`
	Portfolio        []*Card       `json:"portfolio"`
	Spaces           []*Space      `json:"spaces"`
	BookmarkRevision uint64        `json:"bookmark_revision"`
	Notes            []*Note       `json:"notes,omitempty"`
	// Watched is what the chain follower recorded of the addresses the
	// cards hold, in address order (watching.go).
	Watched []*WatchedAddress `json:"watched,omitempty"`
	// ChainEvents are the cards' chain events, oldest first, at most
	// chainEventsMax (chain_events.go); ChainEventSeq numbers them.
	ChainEvents   []ChainEvent `json:"chain_events,omitempty"`
	ChainEventSeq uint64       `json:"chain_event_seq,omitempty"`
	// Notify is the owner's notification channels, rules and outbox
	// (notify.go); nil until the owner sets any.
	Notify *NotifyState `json:"notify,omitempty"`
	// Explorer is the block explorer the site links transactions and
	// addresses to (explorer.go); empty for none, the default.
	Explorer string `json:"explorer,omitempty"`

	Idempotency IdempotencyRecords `json:"idempotency"`
	Audit       []AuditEvent       `json:"audit"`
	AuditSeq    uint64             `json:"audit_seq"` // number of the last audit event

	// Activity is the agents' requests, counted per key, operation,
	// resource and outcome (activity.go); ActivitySeq numbers its entries.
	Activity    []ActivityEntry `json:"activity,omitempty"`
	ActivitySeq uint64          `json:"activity_seq,omitempty"`

	// SheetWrites holds the times of the counted Sheet writes of the last
	// minute (at most sheetWritesPerWindow): the Sheet-write budget.
	SheetWrites []int64 `json:"sheet_writes,omitempty"`
}

// Hash is a SHA-256 digest of a high-entropy secret (API key, owner secret,
// session token). The plaintext never reaches the state.
type Hash [32]byte

// APIKey is an agent's credential. Capability cannot change: the owner
// revokes the key and creates another.
type APIKey struct {
	ID         string `json:"id"`
	Name       string `json:"name"`
	Capability Level  `json:"capability"`
	Hash       Hash   `json:"hash"`
	CreatedAt  int64  `json:"created_at"`
	// LastUsedAt is when an agent last used the key, to the grain of
	// TouchKey (zero: never, or not since the field exists).
	LastUsedAt int64 `json:"last_used_at,omitempty"`
}

// Session is an owner sign-in. It ends at ExpiresAt, which use moves
// forward (TouchSession) up to ExpiresAtMax, the cap on its whole life;
// zero there (a session from before idle expiry) makes ExpiresAt the cap.
type Session struct {
	ID           string `json:"id"`
	Hash         Hash   `json:"hash"`
	CreatedAt    int64  `json:"created_at"`
	ExpiresAt    int64  `json:"expires_at"`
	ExpiresAtMax int64  `json:"expires_at_max,omitempty"`
}

// Card is an Account card (in Portfolio) or a bookmark card (in a Space).
// Bookmark cards have no grant of their own: Grant is used only in Portfolio.
type Card struct {
	ID        string `json:"id"`
	Version   uint64 `json:"version"`
	Address   string `json:"address"` // canonical form, for duplicate checks
	Name      string `json:"name"`
	Note      string `json:"note"`
	ColorKey  string `json:"color_key"`
	CoinID    string `json:"coin_id,omitempty"`
	Grant     Level  `json:"grant"`
	CreatedAt int64  `json:"created_at"`
}

// SpaceType is the type of a Space.
type SpaceType string

const (
	SpaceBitcoin SpaceType = "bitcoin"
	SpaceAltcoin SpaceType = "altcoin"
	SpaceSheet   SpaceType = "sheet"
)

// Space is a Space of bookmark cards (or a Sheet Space).
type Space struct {
	ID      string    `json:"id"`
	Version uint64    `json:"version"`
	Type    SpaceType `json:"type"`
	Name    string    `json:"name"`
	Grant   Level     `json:"grant"`
	// GrantCleared says the owner changed the Space's type, which cleared
	// its grant, and has not granted it again since (the site shows it).
	GrantCleared bool    `json:"grant_cleared,omitempty"`
	Cards        []*Card `json:"cards"`
	Sheet        *Sheet  `json:"sheet,omitempty"` // sheet Spaces only
	CreatedAt    int64   `json:"created_at"`
}

// versionString renders a version as the opaque string the API shows.
func versionString(v uint64) string { return "v" + strconv.FormatUint(v, 10) }

// nextVersion bumps the account's change sequence and returns it as the
// version of whatever just changed. Versions therefore never repeat within
// an account, even across deletes and re-creates.
func (a *Account) nextVersion() uint64 {
	a.Seq++
	return a.Seq
}

func (a *Account) key(id string) *APIKey {
	for _, k := range a.Keys {
		if k.ID == id {
			return k
		}
	}
	return nil
}

func (a *Account) portfolioCard(id string) (int, *Card) {
	for i, c := range a.Portfolio {
		if c.ID == id {
			return i, c
		}
	}
	return -1, nil
}

func (a *Account) space(id string) (int, *Space) {
	for i, s := range a.Spaces {
		if s.ID == id {
			return i, s
		}
	}
	return -1, nil
}

func (h Hash) MarshalJSON() ([]byte, error) { return []byte(`"` + hex.EncodeToString(h[:]) + `"`), nil }

func (h *Hash) UnmarshalJSON(b []byte) error {
	s, err := jsonString(b)
	if err != nil {
		return err
	}
	if hex.DecodedLen(len(s)) != len(h) {
		return fmt.Errorf("hash must be %d hex characters", 2*len(h))
	}
	_, err = hex.Decode(h[:], []byte(s))
	return err
}
