package cluster

import (
	"errors"
	"fmt"
	"maps"
	"sync"
)

// Logins on a sharded cluster. A login names one account across the whole
// cluster, but each group knows only its own accounts' logins, so the meta
// group keeps the table of who holds which (SCALE.md, "State that spans
// groups"). Setting a login first reserves it there (the first reserve
// committed wins), then commits the account's command in its group, then
// settles: the account's other logins are released. A command that fails
// releases a reservation it made; one whose outcome is unknown keeps it,
// and a reservation whose account never got the login can be taken over
// once it is loginReservationTTL old (logins_flow.go).

// loginReservation is who holds a login, and since when (the proposing
// node's clock, carried in the command so that every replica agrees).
type loginReservation struct {
	Account string `json:"account"`
	At      int64  `json:"at"`
}

// loginHeld answers a reserve of a login another account holds.
type loginHeld struct{ loginReservation }

func (h loginHeld) Error() string {
	return fmt.Sprintf("cluster: the login is held by account %s", h.Account)
}

// errLoginHeld is what every loginHeld is (errors.Is).
var errLoginHeld = errors.New("cluster: the login is held by another account")

func (h loginHeld) Is(target error) bool { return target == errLoginHeld }

// loginReserved answers a reserve that applied: New is false when the
// account already held the login.
type loginReserved struct {
	New bool `json:"new"`
}

// loginTable is the meta group's logins: folded login to holder.
type loginTable struct {
	mu      sync.RWMutex
	holders map[string]loginReservation
}

func (t *loginTable) apply(c metaCommand) any {
	if c.Login == "" && c.Op != "settle_logins" || c.Account == "" {
		return fmt.Errorf("cluster: %s without a login or an account", c.Op)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.holders == nil {
		t.holders = map[string]loginReservation{}
	}
	switch c.Op {
	case "reserve_login":
		held, found := t.holders[c.Login]
		switch {
		case found && held.Account == c.Account:
			return loginReserved{New: false}
		case found && held.Account != c.Steal:
			return loginHeld{held}
		}
		t.holders[c.Login] = loginReservation{Account: c.Account, At: c.At}
		return loginReserved{New: true}
	case "release_login":
		if t.holders[c.Login].Account == c.Account {
			delete(t.holders, c.Login)
		}
	case "settle_logins":
		// A full scan: logins change rarely, and the table holds one
		// entry per account with a login.
		for login, held := range t.holders {
			if held.Account == c.Account && login != c.Login {
				delete(t.holders, login)
			}
		}
	}
	return nil
}

// holder is who holds login, if anyone.
func (t *loginTable) holder(login string) (loginReservation, bool) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	held, found := t.holders[login]
	return held, found
}

func (t *loginTable) copy() map[string]loginReservation {
	t.mu.RLock()
	defer t.mu.RUnlock()
	if len(t.holders) == 0 {
		return nil
	}
	return maps.Clone(t.holders)
}

func (t *loginTable) restore(holders map[string]loginReservation) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.holders = maps.Clone(holders)
}
