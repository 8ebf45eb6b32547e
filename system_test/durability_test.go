package system_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// owTenant is one account of a durability test with everything the test
// knows about it.
type owTenant struct {
	name     string
	acct     account
	keys     []string // live API keys
	dead     []string // credentials that must stay refused: revoked keys, old secrets, ended sessions
	sessions []string // live session tokens
	deleted  bool
	secrets  []string // every plaintext secret ever issued, for the at-rest scan
}

// owSecretPart is the random part of a bearer secret (its last segment);
// the account and key ids before it are not secret.
func owSecretPart(secret string) string {
	return secret[strings.LastIndex(secret, ".")+1:]
}

func (o *owTenant) addKey(t testing.TB, s *server, capability string) string {
	t.Helper()
	_, key := owKey(t, s, o.acct.OwnerSecret, capability, o.name+" "+capability)
	o.keys = append(o.keys, key)
	o.secrets = append(o.secrets, key)
	return key
}

// owNewTenant creates an account with its own password.
func owNewTenant(t testing.TB, s *server, name, plan string) *owTenant {
	t.Helper()
	password := fmt.Sprintf("pw-%s-%d", name, time.Now().UnixNano())
	r := do(t, "POST", s.AdminURL+"/admin/v1/accounts", s.AdminToken, map[string]any{"plan": plan, "password": password})
	expect(t, r, http.StatusCreated, "")
	m := r.JSON(t)
	a := account{ID: owString(t, m, "account_id"), OwnerSecret: owString(t, m, "owner_secret"), Password: password}
	return &owTenant{name: name, acct: a, secrets: []string{a.OwnerSecret, password}}
}

// owCapture reads everything observable about the tenants, keyed by what
// was read: the owner's and each key's view, byte for byte, except the
// keys' last_used_at, which the capture's own reads with the keys move.
func owCapture(t testing.TB, s *server, tenants []*owTenant) map[string]string {
	t.Helper()
	got := map[string]string{}
	get := func(label, url, bearer string) []byte {
		r := do(t, "GET", url, bearer, nil)
		if r.Status != http.StatusOK {
			t.Fatalf("%s: GET %s: %d %s", label, url, r.Status, r.Body)
		}
		got[label] = string(r.Body)
		if strings.HasSuffix(url, "/owner/v1/keys") {
			got[label] = withoutLastUse(t, r.Body)
		}
		return r.Body
	}
	for _, o := range tenants {
		if o.deleted {
			continue
		}
		secret := o.acct.OwnerSecret
		list := get(o.name+" owner cards", s.URL+"/owner/v1/portfolio/cards", secret)
		var cards struct {
			IDs []string `json:"included_card_ids"`
		}
		if err := json.Unmarshal(list, &cards); err != nil {
			t.Fatal(err)
		}
		for _, id := range cards.IDs {
			get(o.name+" owner card "+id, s.URL+"/owner/v1/portfolio/cards/"+id, secret)
		}
		get(o.name+" owner keys", s.URL+"/owner/v1/keys", secret)
		if r := do(t, "GET", s.URL+"/owner/v1/bookmark-spaces", secret, nil); r.Status != http.StatusNotFound {
			get(o.name+" owner spaces", s.URL+"/owner/v1/bookmark-spaces", secret)
		}
		for i, key := range o.keys {
			get(fmt.Sprintf("%s key %d me", o.name, i), s.URL+"/v1/me", key)
			get(fmt.Sprintf("%s key %d cards", o.name, i), s.URL+"/v1/portfolio/cards", key)
		}
		for i, session := range o.sessions {
			get(fmt.Sprintf("%s session %d keys", o.name, i), s.URL+"/owner/v1/keys", session)
		}
	}
	return got
}

// withoutLastUse is a key list without its keys' last_used_at.
func withoutLastUse(t testing.TB, list []byte) string {
	t.Helper()
	var m struct {
		Keys []map[string]any `json:"keys"`
	}
	if err := json.Unmarshal(list, &m); err != nil {
		t.Fatalf("key list: %v: %s", err, list)
	}
	for _, k := range m.Keys {
		delete(k, "last_used_at")
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// owCheckRefused checks that every dead credential of the tenants is
// still refused, and that deleted accounts cannot sign in.
func owCheckRefused(t testing.TB, s *server, tenants []*owTenant) {
	t.Helper()
	for _, o := range tenants {
		for _, cred := range o.dead {
			if strings.HasPrefix(cred, "awk.") {
				owExpectUnauthorized(t, do(t, "GET", s.URL+"/v1/me", cred, nil))
			} else {
				owExpectUnauthorized(t, do(t, "GET", s.URL+"/owner/v1/keys", cred, nil))
			}
		}
		if o.deleted {
			owExpectError(t, owSignIn(t, s, o.acct.ID, o.acct.Password), http.StatusUnauthorized, "UNAUTHORIZED", "")
		} else {
			expect(t, owSignIn(t, s, o.acct.ID, o.acct.Password), http.StatusCreated, "")
		}
	}
}

// owCompare fails on any difference between two captures.
func owCompare(t testing.TB, when string, before, after map[string]string) {
	t.Helper()
	diffs := 0
	for label, want := range before {
		if got, found := after[label]; !found {
			t.Errorf("%s: %s missing", when, label)
			diffs++
		} else if got != want {
			t.Errorf("%s: %s changed:\n before %s\n after  %s", when, label, want, got)
			diffs++
		}
	}
	for label := range after {
		if _, found := before[label]; !found {
			t.Errorf("%s: %s appeared", when, label)
			diffs++
		}
	}
	if diffs > 0 {
		t.FailNow()
	}
}

// owScanAtRest fails if a plaintext secret or password appears in any file
// of the data dir or in the server's logs. accountID, which is stored in
// the clear, is the positive control that the scan reads real content.
func owScanAtRest(t testing.TB, s *server, tenants []*owTenant, accountID string) {
	t.Helper()
	var blobs [][]byte
	var names []string
	err := filepath.WalkDir(s.Dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		blobs, names = append(blobs, b), append(names, path)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	blobs, names = append(blobs, s.logs.Bytes()), append(names, "server log")
	control := false
	for _, b := range blobs {
		control = control || bytes.Contains(b, []byte(accountID))
	}
	if !control {
		t.Fatalf("account id %s not found anywhere under %s: the at-rest scan reads nothing useful", accountID, s.Dir)
	}
	for _, o := range tenants {
		for _, secret := range o.secrets {
			needle := []byte(secret)
			if strings.Contains(secret, ".") {
				needle = []byte(owSecretPart(secret))
			}
			for i, b := range blobs {
				if bytes.Contains(b, needle) {
					t.Errorf("plaintext secret of %s found in %s", o.name, names[i])
				}
			}
		}
	}
}

// owLastWrite is the last write acknowledged before a restart.
type owLastWrite struct {
	key, cardID, version string
}

// owWaitFor polls GET url until ok accepts the answer or 10s pass, and
// says how long that took.
func owWaitFor(t testing.TB, url, bearer string, ok func(response) bool) (time.Duration, bool) {
	t.Helper()
	start := time.Now()
	for time.Since(start) < 10*time.Second {
		if ok(do(t, "GET", url, bearer, nil)) {
			return time.Since(start), true
		}
		time.Sleep(5 * time.Millisecond)
	}
	return time.Since(start), false
}

// owProbeReplay makes the first read after a restart (s.start has just
// seen /readyz answer 200): it must see the last write acknowledged before
// the restart. A stale answer is reported without stopping the test, which
// then waits for the node to catch up, so that its later checks still tell
// whether anything was lost.
func owProbeReplay(t testing.TB, s *server, when string, last owLastWrite) {
	t.Helper()
	url := s.URL + "/v1/portfolio/cards/" + last.cardID
	current := func(r response) bool {
		if r.Status != http.StatusOK {
			return false
		}
		card, _ := r.JSON(t)["card"].(map[string]any)
		return card["version"] == last.version
	}
	r := do(t, "GET", url, last.key, nil)
	if current(r) {
		return
	}
	took, caughtUp := owWaitFor(t, url, last.key, current)
	t.Errorf("%s: the first read after /readyz answered 200, GET /v1/portfolio/cards/%s with a valid key, answered %d %s; want 200 with version %s (the last acknowledged write). The same read was current %v later: %v",
		when, last.cardID, r.Status, r.Body, last.version, took.Round(time.Millisecond), caughtUp)
	if !caughtUp {
		t.FailNow()
	}
}

// owBulk fills the log: n accounts, each with cards Account cards that are
// then each patched patches times, written concurrently (one goroutine per
// account). Replaying that many commands takes the node a while.
func owBulk(t *testing.T, s *server, n, cards, patches, addrBase int) ([]*owTenant, owLastWrite) {
	t.Helper()
	tenants := make([]*owTenant, n)
	for i := range n {
		tenants[i] = owNewTenant(t, s, fmt.Sprintf("bulk%d", i), "base")
		tenants[i].addKey(t, s, "write")
	}
	filler := strings.Repeat("replay takes a while. ", 40) // a fat command: ~900 characters
	var mu sync.Mutex
	var last owLastWrite
	var failed atomic.Bool
	var wg sync.WaitGroup
	for i, o := range tenants {
		wg.Go(func() {
			key := o.keys[0]
			for c := range cards {
				st, body, err := owTry(httpClient, "POST", s.URL+"/v1/portfolio/cards", key, map[string]any{"address": owAddress(addrBase + i*cards + c), "name": "bulk"})
				if err != nil || st != http.StatusCreated {
					t.Errorf("bulk create: %d %s %v", st, body, err)
					failed.Store(true)
					return
				}
				var got struct{ Card struct{ ID, Version string } }
				json.Unmarshal(body, &got)
				id, version := got.Card.ID, got.Card.Version
				for p := range patches {
					st, body, err := owTry(httpClient, "PATCH", s.URL+"/v1/portfolio/cards/"+id, key, map[string]any{"expected_version": version, "note": fmt.Sprintf("patch %d %s", p, filler)})
					if err != nil || st != http.StatusOK {
						t.Errorf("bulk patch: %d %s %v", st, body, err)
						failed.Store(true)
						return
					}
					json.Unmarshal(body, &got)
					version = got.Card.Version
					mu.Lock()
					last = owLastWrite{key: key, cardID: id, version: version}
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	if failed.Load() {
		t.FailNow()
	}
	return tenants, last
}

// owCardVersion returns the version of an Account card as its owner sees it.
func owCardVersion(t testing.TB, s *server, secret, id string) string {
	t.Helper()
	r := do(t, "GET", s.URL+"/owner/v1/portfolio/cards/"+id, secret, nil)
	expect(t, r, http.StatusOK, "")
	return owString(t, owObject(t, r.JSON(t), "card"), "version")
}

func owGrant(t testing.TB, s *server, secret, id, level string) {
	t.Helper()
	expect(t, do(t, "PUT", s.URL+"/owner/v1/grants/portfolio/"+id, secret, map[string]any{"level": level}), http.StatusOK, "")
}

// owRestart stops the server gracefully (or with SIGKILL) and starts it
// again on the same data dir and ports. While the harness's start waits
// for readiness, owRestart polls /readyz itself every 200µs, as a
// load balancer's probe would, and makes the first read the moment the
// node says it is ready: that read must see last, the last write
// acknowledged before the stop (see owProbeReplay).
func owRestart(t *testing.T, s *server, kill bool, when string, last owLastWrite) {
	t.Helper()
	if kill {
		s.kill()
	} else {
		s.stop()
	}
	httpClient.CloseIdleConnections()
	started := make(chan struct{})
	var startOK atomic.Bool // false when start failed the test and exited its goroutine
	go func() {
		defer close(started)
		s.start()
		startOK.Store(true)
	}()
	probe := &http.Client{Timeout: time.Second}
	defer probe.CloseIdleConnections()
	deadline := time.Now().Add(25 * time.Second)
	for {
		if st, _, err := owTry(probe, "GET", s.AdminURL+"/readyz", "", nil); err == nil && st == http.StatusOK {
			break
		}
		select {
		case <-started:
			if !startOK.Load() {
				t.FailNow()
			}
		default:
		}
		if time.Now().After(deadline) {
			<-started
			t.Fatalf("%s: /readyz never answered 200", when)
		}
		time.Sleep(200 * time.Microsecond)
	}
	owProbeReplay(t, s, when, last)
	<-started
	if !startOK.Load() {
		t.FailNow()
	}
}

func TestDurabilityRestartAndSnapshot(t *testing.T) {
	t.Parallel()
	for _, store := range raftLogs {
		t.Run(store, func(t *testing.T) {
			t.Parallel() // each store its own node, ports and data dir
			testDurabilityRestartAndSnapshot(t, store)
		})
	}
}

func testDurabilityRestartAndSnapshot(t *testing.T, store string) {
	s := startOnRaftLog(t, store)

	// A: a bit of everything.
	a := owNewTenant(t, s, "A", "base")
	aRead, aWrite := a.addKey(t, s, "read"), a.addKey(t, s, "write")
	revokeID, revoked := owKey(t, s, a.acct.OwnerSecret, "write", "to revoke")
	a.secrets = append(a.secrets, revoked)
	owExpectNoContent(t, do(t, "DELETE", s.URL+"/owner/v1/keys/"+revokeID, a.acct.OwnerSecret, nil))
	a.dead = append(a.dead, revoked)
	var aCards []string
	for i := range 3 {
		aCards = append(aCards, owAgentCard(t, s, aWrite, owAddress(100+i), fmt.Sprintf("agent %d", i))["id"].(string))
	}
	for i := range 2 {
		aCards = append(aCards, owOwnerCard(t, s, a.acct.OwnerSecret, owAddress(110+i), fmt.Sprintf("owner %d", i))["id"].(string))
	}
	owGrant(t, s, a.acct.OwnerSecret, aCards[3], "read")
	owGrant(t, s, a.acct.OwnerSecret, aCards[4], "write")
	owGrant(t, s, a.acct.OwnerSecret, aCards[0], "none")
	v := owCardVersion(t, s, a.acct.OwnerSecret, aCards[1])
	r := do(t, "PATCH", s.URL+"/v1/portfolio/cards/"+aCards[1], aWrite, map[string]any{"expected_version": v, "name": "patched", "note": "a note", "color_key": "teal"})
	expect(t, r, http.StatusOK, "")
	v = owCardVersion(t, s, a.acct.OwnerSecret, aCards[2])
	expect(t, do(t, "DELETE", s.URL+"/v1/portfolio/cards/"+aCards[2], aWrite, map[string]any{"expected_version": v}), http.StatusOK, "")
	expect(t, do(t, "PUT", s.URL+"/owner/v1/grants/bookmark-spaces/"+owFirstSpaceID(t, s, a.acct.OwnerSecret), a.acct.OwnerSecret, map[string]any{"level": "read"}), http.StatusOK, "")
	live := owSession(t, s, a.acct)
	ended := owSession(t, s, a.acct)
	owExpectNoContent(t, do(t, "DELETE", s.URL+"/owner/v1/sessions/current", ended, nil))
	a.sessions, a.dead = append(a.sessions, live), append(a.dead, ended)
	a.secrets = append(a.secrets, live, ended)

	// B: plan changes.
	b := owNewTenant(t, s, "B", "base")
	bKey := b.addKey(t, s, "write")
	owAgentCard(t, s, bKey, owAddress(120), "b card")
	expect(t, do(t, "PUT", s.URL+"/owner/v1/plan", b.acct.OwnerSecret, map[string]any{"plan": "extended"}), http.StatusOK, "")

	// C: password change.
	c := owNewTenant(t, s, "C", "base")
	cOld := c.addKey(t, s, "write")
	owAgentCard(t, s, cOld, owAddress(130), "c card")
	newPassword := fmt.Sprintf("pw-C-changed-%d", time.Now().UnixNano())
	r = do(t, "POST", s.URL+"/owner/v1/password", c.acct.OwnerSecret, map[string]any{"current_password": c.acct.Password, "new_password": newPassword})
	expect(t, r, http.StatusOK, "")
	c.keys, c.dead = nil, append(c.dead, cOld, c.acct.OwnerSecret)
	c.acct.Password = newPassword
	c.acct.OwnerSecret = owString(t, r.JSON(t), "owner_secret")
	c.secrets = append(c.secrets, newPassword, c.acct.OwnerSecret)
	c.addKey(t, s, "read")

	// D: owner-secret rotation.
	d := owNewTenant(t, s, "D", "extended")
	dOld := d.addKey(t, s, "write")
	r = do(t, "POST", s.URL+"/owner/v1/owner-secret", d.acct.OwnerSecret, map[string]any{"current_password": d.acct.Password})
	expect(t, r, http.StatusOK, "")
	d.dead = append(d.dead, d.acct.OwnerSecret, dOld)
	d.acct.OwnerSecret = owString(t, r.JSON(t), "owner_secret")
	d.keys = nil
	d.secrets = append(d.secrets, d.acct.OwnerSecret)
	d.addKey(t, s, "write")

	// E: deleted.
	e := owNewTenant(t, s, "E", "base")
	eKey := e.addKey(t, s, "write")
	owAgentCard(t, s, eKey, owAddress(140), "e card")
	owExpectNoContent(t, do(t, "DELETE", s.URL+"/owner/v1/account", e.acct.OwnerSecret, map[string]any{"confirm": true, "current_password": e.acct.Password}))
	e.deleted, e.keys, e.dead = true, nil, append(e.dead, eKey, e.acct.OwnerSecret)

	// Enough log that replaying it takes the restarted node a while.
	bulk, last := owBulk(t, s, 20, 10, 15, 1000)

	tenants := append([]*owTenant{a, b, c, d, e}, bulk...)
	before := owCapture(t, s, tenants)
	owCheckRefused(t, s, tenants)
	indexBefore := owNumber(t, owClusterStatus(t, s), "applied_index")

	t.Log("graceful restart, log replay only")
	owRestart(t, s, false, "graceful restart", last)
	owCompare(t, "after a graceful restart", before, owCapture(t, s, tenants))
	owCheckRefused(t, s, tenants)
	if idx := owNumber(t, owClusterStatus(t, s), "applied_index"); idx < indexBefore {
		t.Fatalf("applied_index %d after restart, was %d", idx, indexBefore)
	}
	// Writes continue from the restored state: versions never repeat.
	v = owCardVersion(t, s, a.acct.OwnerSecret, aCards[1])
	r = do(t, "PATCH", s.URL+"/v1/portfolio/cards/"+aCards[1], aWrite, map[string]any{"expected_version": v, "name": "patched again"})
	expect(t, r, http.StatusOK, "")
	if nv := owString(t, owObject(t, r.JSON(t), "card"), "version"); nv == v || strings.Contains(before[a.name+" owner cards"], `"version":"`+nv+`"`) {
		t.Fatalf("version %s after restart reuses a version from before it", nv)
	}

	t.Log("snapshot, more writes, restart: snapshot restore plus log replay")
	r = do(t, "POST", s.AdminURL+"/admin/v1/snapshot", s.AdminToken, nil)
	expect(t, r, http.StatusOK, "")
	if snaps, _ := filepath.Glob(filepath.Join(s.Dir, "snapshots", "*", "state.bin")); len(snaps) == 0 {
		t.Fatalf("POST /admin/v1/snapshot left no snapshots/*/state.bin under %s", s.Dir)
	}
	f := owNewTenant(t, s, "F", "extended")
	fKey := f.addKey(t, s, "write")
	for i := range 4 {
		owAgentCard(t, s, fKey, owAddress(150+i), fmt.Sprintf("after snapshot %d", i))
	}
	owOwnerCard(t, s, f.acct.OwnerSecret, owAddress(160), "owner after snapshot")
	lastCard := owAgentCard(t, s, aWrite, owAddress(112), "after snapshot")
	aCards = append(aCards, lastCard["id"].(string))
	owGrant(t, s, a.acct.OwnerSecret, aCards[3], "none")
	owGrant(t, s, a.acct.OwnerSecret, aCards[0], "write")
	readID := owString(t, owMe(t, s, aRead), "key_id")
	owExpectNoContent(t, do(t, "DELETE", s.URL+"/owner/v1/keys/"+readID, a.acct.OwnerSecret, nil))
	a.keys, a.dead = slices.DeleteFunc(a.keys, func(k string) bool { return k == aRead }), append(a.dead, aRead)
	expect(t, do(t, "PUT", s.URL+"/owner/v1/plan", b.acct.OwnerSecret, map[string]any{"plan": "base"}), http.StatusOK, "")
	tenants = append(tenants, f)
	before = owCapture(t, s, tenants)

	owRestart(t, s, false, "snapshot + writes + graceful restart", owLastWrite{aWrite, lastCard["id"].(string), lastCard["version"].(string)})
	owCompare(t, "after snapshot + writes + graceful restart", before, owCapture(t, s, tenants))
	owCheckRefused(t, s, tenants)

	t.Log("snapshot, more writes, SIGKILL, restart")
	expect(t, do(t, "POST", s.AdminURL+"/admin/v1/snapshot", s.AdminToken, nil), http.StatusOK, "")
	g := owNewTenant(t, s, "G", "base")
	gKey := g.addKey(t, s, "write")
	owGrant(t, s, a.acct.OwnerSecret, aCards[3], "write")
	gCard := owAgentCard(t, s, gKey, owAddress(170), "before the kill")
	tenants = append(tenants, g)
	before = owCapture(t, s, tenants)
	owRestart(t, s, true, "snapshot + writes + SIGKILL", owLastWrite{gKey, gCard["id"].(string), gCard["version"].(string)})
	owCompare(t, "after snapshot + writes + SIGKILL", before, owCapture(t, s, tenants))
	owCheckRefused(t, s, tenants)

	// Secrets at rest: only hashes reach the log, the snapshots and the logs.
	s.stop()
	owScanAtRest(t, s, tenants, a.acct.ID)
}

// owTry is one request that reports failure instead of failing the test,
// for use off the test goroutine.
func owTry(hc *http.Client, method, url, bearer string, body any) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		return 0, nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// owLoadAccount is one account written to by one goroutine in the crash test.
type owLoadAccount struct {
	acct  account
	key   string
	base  int               // first address index of its cards
	acked map[string]string // card id → address, for every 201
}

// owCreateLoadAccounts creates n accounts with a write key each, in
// parallel.
func owCreateLoadAccounts(t *testing.T, s *server, n, base int) []*owLoadAccount {
	t.Helper()
	out := make([]*owLoadAccount, n)
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			password := fmt.Sprintf("crash-test-password-%d", base+i)
			st, body, err := owTry(httpClient, "POST", s.AdminURL+"/admin/v1/accounts", s.AdminToken, map[string]any{"plan": "base", "password": password})
			if err != nil || st != http.StatusCreated {
				errs <- fmt.Errorf("create account: %d %s %v", st, body, err)
				return
			}
			var created struct{ AccountID, OwnerSecret string }
			var raw map[string]string
			if err := json.Unmarshal(body, &raw); err != nil {
				errs <- err
				return
			}
			created.AccountID, created.OwnerSecret = raw["account_id"], raw["owner_secret"]
			st, body, err = owTry(httpClient, "POST", s.URL+"/owner/v1/keys", created.OwnerSecret, map[string]any{"capability": "write", "name": "load"})
			if err != nil || st != http.StatusCreated {
				errs <- fmt.Errorf("create key: %d %s %v", st, body, err)
				return
			}
			if err := json.Unmarshal(body, &raw); err != nil {
				errs <- err
				return
			}
			out[i] = &owLoadAccount{
				acct:  account{ID: created.AccountID, OwnerSecret: created.OwnerSecret, Password: password},
				key:   raw["key"],
				base:  (base + i) * 100,
				acked: map[string]string{},
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	return out
}

func TestDurabilityCrashMidLoad(t *testing.T) {
	t.Parallel()
	for _, store := range raftLogs {
		t.Run(store, func(t *testing.T) {
			t.Parallel() // each store its own node, ports and data dir
			testDurabilityCrashMidLoad(t, store)
		})
	}
}

func testDurabilityCrashMidLoad(t *testing.T, store string) {
	s := startOnRaftLog(t, store)
	const accountsPerCycle, cardsPerAccount = 20, 10
	var all []*owLoadAccount
	for cycle, killAt := range []int{20, 80, 140} {
		load := owCreateLoadAccounts(t, s, accountsPerCycle, cycle*accountsPerCycle)
		all = append(all, load...)

		hc := &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: accountsPerCycle}}
		var acks, inFlightFailures, loadErrors atomic.Int64
		var killed atomic.Bool
		var mu sync.Mutex // guards the acked maps and last
		var last owLastWrite
		var wg sync.WaitGroup
		for _, la := range load {
			wg.Go(func() {
				for i := range cardsPerAccount {
					addr := owAddress(la.base + i)
					st, body, err := owTry(hc, "POST", s.URL+"/v1/portfolio/cards", la.key, map[string]any{"address": addr, "name": fmt.Sprintf("card %d", i)})
					if err != nil {
						if !killed.Load() {
							t.Errorf("cycle %d: card write failed before the kill: %v", cycle, err)
							loadErrors.Add(1)
						}
						inFlightFailures.Add(1)
						return
					}
					if st != http.StatusCreated {
						t.Errorf("cycle %d: card write answered %d %s", cycle, st, body)
						loadErrors.Add(1)
						return
					}
					var created struct {
						Card struct{ ID, Address, Version string }
					}
					if err := json.Unmarshal(body, &created); err != nil || created.Card.ID == "" || created.Card.Address != addr {
						t.Errorf("cycle %d: 201 body %s (%v)", cycle, body, err)
						loadErrors.Add(1)
						return
					}
					mu.Lock()
					la.acked[created.Card.ID] = addr
					last = owLastWrite{key: la.key, cardID: created.Card.ID, version: created.Card.Version}
					mu.Unlock()
					acks.Add(1)
				}
			})
		}
		deadline := time.Now().Add(30 * time.Second)
		for acks.Load() < int64(killAt) && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		killed.Store(true)
		s.kill()
		ackedAtKill := acks.Load()
		wg.Wait()
		mu.Lock()
		lastAcked := last
		mu.Unlock()
		hc.CloseIdleConnections()
		if loadErrors.Load() > 0 {
			t.FailNow()
		}
		t.Logf("cycle %d: SIGKILL after %d acknowledged writes (%d at the end); %d writes were cut off", cycle, ackedAtKill, acks.Load(), inFlightFailures.Load())
		if acks.Load() >= accountsPerCycle*cardsPerAccount {
			t.Fatalf("cycle %d: every write finished before the kill; the kill was not mid-load", cycle)
		}

		// owRestart kills again: a no-op on the dead process.
		owRestart(t, s, true, fmt.Sprintf("cycle %d", cycle), lastAcked)
		total := 0
		for _, la := range all {
			for id, addr := range la.acked {
				r := do(t, "GET", s.URL+"/v1/portfolio/cards/"+id, la.key, nil)
				if r.Status != http.StatusOK {
					t.Fatalf("cycle %d: acknowledged card %s of account %s: %d %s", cycle, id, la.acct.ID, r.Status, r.Body)
				}
				if got := owObject(t, r.JSON(t), "card"); got["address"] != addr || got["id"] != id {
					t.Fatalf("cycle %d: card %s came back as %v, want address %s", cycle, id, got, addr)
				}
			}
			// At most the one write in flight at the kill may have landed
			// without its answer; nothing else appears.
			r := do(t, "GET", s.URL+"/v1/portfolio/cards", la.key, nil)
			expect(t, r, http.StatusOK, "")
			ids := owStrings(t, r.JSON(t), "included_card_ids")
			extra := 0
			for _, id := range ids {
				if _, acked := la.acked[id]; !acked {
					extra++
				}
			}
			if extra > 1 {
				t.Fatalf("cycle %d: account %s holds %d unacknowledged cards, at most 1 can have been in flight: %v", cycle, la.acct.ID, extra, ids)
			}
			if used := owNumber(t, owObject(t, owMe(t, s, la.key), "portfolio_cards"), "used"); used != len(ids) {
				t.Fatalf("cycle %d: portfolio_cards.used %d but %d cards listed", cycle, used, len(ids))
			}
			total += len(la.acked)
		}
		t.Logf("cycle %d: all %d acknowledged cards of %d accounts present after restart", cycle, total, len(all))
	}
}
