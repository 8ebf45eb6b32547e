package httpd

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/addrwatch/addrwatch/actors"
	"github.com/addrwatch/addrwatch/httpd/edge"
)

// sheetCeilingTest is a server with the spec's limits on a frozen clock,
// and the agent keys of two accounts.
type sheetCeilingTest struct {
	*ownerTest
	sheet          string // a Sheet path of the first account
	key, otherKey  string
	otherSheetPath string
}

func newSheetCeilingTest(t *testing.T) *sheetCeilingTest {
	t.Helper()
	c := newClock()
	s := New(Config{Store: newMemoryStore(t), Now: c.now, PasswordCost: bcrypt.MinCost, EdgeLimits: true})
	o := &ownerTest{t: t, server: s, clock: c, handler: s.PublicHandler(), password: ownerTestPassword}
	st := &sheetCeilingTest{ownerTest: o}
	for i, key := range []*string{&st.key, &st.otherKey} {
		created, err := s.CreateAccount(context.Background(), actors.PlanBase, ownerTestPassword, "")
		if err != nil {
			t.Fatal(err)
		}
		o.account = created
		*key, _ = o.key("read", fmt.Sprint("agent ", i))
		path := "/v1/bookmark-spaces/" + firstSpace(o) + "/sheet"
		if i == 0 {
			st.sheet = path
		} else {
			st.otherSheetPath = path
		}
	}
	return st
}

// firstSpace is the ID of the account's first Space.
func firstSpace(o *ownerTest) string {
	for id := range o.spaces() {
		return id
	}
	o.t.Fatal("no Space")
	return ""
}

// Issue 28: 40 clients sending Sheet GETs without a key spent the global
// ceiling of 20 a second, and a real key's Sheet requests answered 429 (5
// of 5). A request without a key, or with a key that does not
// authenticate, is refused with 401 and spends none of it.
func TestKeylessSheetRequestsDoNotSpendTheGlobalCeiling(t *testing.T) {
	t.Parallel()
	st := newSheetCeilingTest(t)
	notUnauthorized := 0
	for i := range 40 {
		ip := fmt.Sprintf("203.0.113.%d", i+1)
		for j := range 20 {
			bearer := ""
			if j%2 == 1 {
				bearer = fmt.Sprintf("awk.nosuchaccount.key%d.secretsecretsecret", i) // within each key's authentication budget
			}
			if status, _, _ := st.sendRaw(ip, "GET", st.sheet, bearer, nil); status != http.StatusUnauthorized {
				notUnauthorized++
			}
		}
	}
	refused := 0
	for range 5 {
		if status, _, _ := st.sendRaw("198.51.100.50", "GET", st.sheet, st.key, nil); status == http.StatusTooManyRequests || status == http.StatusUnauthorized {
			refused++
		}
	}
	if notUnauthorized != 0 || refused != 0 {
		t.Fatalf("%d of 800 Sheet GETs without a working key were not 401, and the real key's Sheet GETs were refused %d of 5", notUnauthorized, refused)
	}
}

// One account's key, from as many clients as it likes, takes at most its
// share of the global ceiling: another account's key still reads its
// Sheet.
func TestOneAccountTakesAFairShareOfTheSheetCeiling(t *testing.T) {
	t.Parallel()
	st := newSheetCeilingTest(t)
	refused := 0
	for i := range 40 {
		status, retry, _ := st.sendRaw(fmt.Sprintf("203.0.113.%d", i+1), "GET", st.sheet, st.key, nil)
		if status == http.StatusTooManyRequests {
			if retry < 1 {
				t.Fatalf("a 429 without Retry-After")
			}
			refused++
		}
	}
	if refused != 40-edge.SheetAccountRate.Burst {
		t.Fatalf("one account's key from 40 clients: %d refused, want all but its share of %d", refused, edge.SheetAccountRate.Burst)
	}
	for i := range 5 {
		if status, retry, body := st.sendRaw("198.51.100.50", "GET", st.otherSheetPath, st.otherKey, nil); status == http.StatusTooManyRequests {
			t.Fatalf("another account's Sheet GET %d of 5: %d (Retry-After %d) %s", i+1, status, retry, body)
		}
	}
}
