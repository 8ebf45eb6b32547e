package system_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/addrwatch/addrwatch/cluster"
)

// A sharded cluster (--groups): three addrwatchd processes that each run
// the meta group and three data groups over one node port.

type groupsStatus struct {
	NodeID string `json:"node_id"`
	Meta   struct {
		Groups int      `json:"groups"`
		Leader string   `json:"leader"`
		Nodes  []member `json:"nodes"`
	} `json:"meta"`
	Groups []struct {
		Group    int      `json:"group"`
		Slots    int      `json:"slots"`
		Leader   string   `json:"leader"`
		Accounts int      `json:"accounts"`
		Term     uint64   `json:"term"`
		Nodes    []member `json:"nodes"`
	} `json:"groups"`
}

func groupsStatusOf(t *testing.T, s *server) groupsStatus {
	t.Helper()
	var st groupsStatus
	adminStatus(t, s, &st)
	return st
}

// eventually retries check for up to 20 s.
func eventually(t *testing.T, what string, check func() error) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// oneGroupPerNode waits until each node leads one group, and returns the
// leader of each group.
func oneGroupPerNode(t *testing.T, nodes []*server) map[int]string {
	t.Helper()
	var leaders map[int]string
	eventually(t, "one group led by each node", func() error {
		st := groupsStatusOf(t, nodes[0])
		leaders = map[int]string{}
		seen := map[string]bool{}
		for _, g := range st.Groups {
			leaders[g.Group] = g.Leader
			seen[g.Leader] = true
		}
		if len(seen) != len(nodes) || seen[""] {
			return fmt.Errorf("leaders %v", leaders)
		}
		return nil
	})
	return leaders
}

// retry503 repeats a request while it answers 503, for up to 15 s, as a
// client should: a group without a leader yet, or one handing its
// leadership over (the nodes balance the leaders in the first seconds),
// refuses before anything is written.
func retry503(t testing.TB, send func() response) response {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		r := send()
		if r.Status != http.StatusServiceUnavailable || time.Now().After(deadline) {
			return r
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestShardedClusterServesTheAPI: accounts created through any node spread
// over the groups; every node serves every account's agent, owner and
// sign-in requests by forwarding each to its own group's leader; the
// leaders spread one group per node; killing one node fails over only the
// group it led, and no acknowledged write is lost.
func TestShardedClusterServesTheAPI(t *testing.T) {
	t.Parallel()
	nodes := startCluster(t, 3, "--groups", "3")
	st := groupsStatusOf(t, nodes[0])
	if st.Meta.Groups != 3 || len(st.Groups) != 3 || st.Groups[0].Slots+st.Groups[1].Slots+st.Groups[2].Slots != 4096 {
		t.Fatalf("status of a sharded node: %+v", st)
	}

	// Accounts through every node, each node's admin API in turn.
	// A create that meets a leader change (the nodes balance the leaders
	// in the first seconds) is refused with 503 before anything is
	// written, and is retried.
	var accounts []account
	for i := range 15 {
		s := nodes[i%3]
		const password = "correct horse battery"
		r := retry503(t, func() response {
			return do(t, "POST", s.AdminURL+"/admin/v1/accounts", s.AdminToken, map[string]any{"plan": "base", "password": password})
		})
		expect(t, r, http.StatusCreated, "")
		m := r.JSON(t)
		accounts = append(accounts, account{ID: m["account_id"].(string), OwnerSecret: m["owner_secret"].(string), Password: password})
	}
	eventually(t, "accounts spread over the groups", func() error {
		st := groupsStatusOf(t, nodes[1])
		total, used := 0, 0
		for _, g := range st.Groups {
			total += g.Accounts
			if g.Accounts > 0 {
				used++
			}
		}
		if total != 15 || used < 2 {
			return fmt.Errorf("accounts per group: %+v", st.Groups)
		}
		return nil
	})

	// Every account through every node: its owner makes a key, its agent
	// writes and reads, its owner signs in by account ID.
	keys := map[string]string{}
	cards := map[string][]string{}
	for i, a := range accounts {
		r := retry503(t, func() response {
			return do(t, "POST", nodes[(i+1)%3].URL+"/owner/v1/keys", a.OwnerSecret, map[string]any{"capability": "write", "name": "agent"})
		})
		expect(t, r, http.StatusCreated, "")
		keys[a.ID] = r.JSON(t)["key"].(string)
		for _, s := range nodes {
			r := retry503(t, func() response {
				return do(t, "POST", s.URL+"/v1/portfolio/cards", keys[a.ID], map[string]any{"address": addressFor(len(cards[a.ID]))},
					"Idempotency-Key", fmt.Sprintf("%s-%d", a.ID, len(cards[a.ID])))
			})
			expect(t, r, http.StatusCreated, "")
			cards[a.ID] = append(cards[a.ID], r.JSON(t)["card"].(map[string]any)["id"].(string))
			me := retry503(t, func() response { return do(t, "GET", s.URL+"/v1/me", keys[a.ID], nil) })
			expect(t, me, http.StatusOK, "")
			if me.JSON(t)["account_id"] != a.ID {
				t.Fatalf("/v1/me through %s answered for another account: %s", s.URL, me.Body)
			}
		}
		session := retry503(t, func() response {
			return do(t, "POST", nodes[i%3].URL+"/owner/v1/sessions", "", map[string]any{"account_id": a.ID, "password": a.Password})
		})
		expect(t, session, http.StatusCreated, "")
		token, _ := session.JSON(t)["session"].(string)
		expect(t, retry503(t, func() response { return do(t, "GET", nodes[(i+2)%3].URL+"/owner/v1/keys", token, nil) }), http.StatusOK, "")
	}

	// A login names one account across the groups: its owner signs in by
	// it through any node, and no other account can take it.
	r := retry503(t, func() response {
		return do(t, "POST", nodes[0].AdminURL+"/admin/v1/accounts", nodes[0].AdminToken, map[string]any{"plan": "base", "password": "correct horse battery", "login": "Shard.Owner"})
	})
	expect(t, r, http.StatusCreated, "")
	owner := r.JSON(t)["account_id"].(string)
	for _, s := range nodes {
		session := retry503(t, func() response {
			return do(t, "POST", s.URL+"/owner/v1/sessions", "", map[string]any{"login": "shard.owner", "password": "correct horse battery"})
		})
		expect(t, session, http.StatusCreated, "")
		if !strings.HasPrefix(session.JSON(t)["session"].(string), "awt."+owner+".") {
			t.Fatalf("signing in by login through %s opened a session of another account: %s", s.URL, session.Body)
		}
	}
	for i := range 6 { // accounts land in random groups: some in another group than the owner's
		r := retry503(t, func() response {
			return do(t, "POST", nodes[i%3].AdminURL+"/admin/v1/accounts", nodes[i%3].AdminToken, map[string]any{"plan": "base", "password": "correct horse battery", "login": "SHARD.owner"})
		})
		expect(t, r, http.StatusConflict, "CONFLICT")
	}

	// What a sharded cluster does not offer yet is refused, saying so.
	expect(t, do(t, "POST", nodes[0].AdminURL+"/admin/v1/cluster/transfer", nodes[0].AdminToken, map[string]any{}), http.StatusUnprocessableEntity, "VALIDATION")
	expect(t, do(t, "POST", nodes[0].AdminURL+"/admin/v1/cluster/transfer", nodes[0].AdminToken, map[string]any{"group": 3}), http.StatusUnprocessableEntity, "VALIDATION")

	// The leaders spread one group per node.
	leaders := oneGroupPerNode(t, nodes)
	// One group's leadership moves on request, through any node: the
	// request is forwarded to that group's leader.
	termBefore := groupsStatusOf(t, nodes[0]).Groups[1].Term
	var via *server
	for i, s := range nodes {
		if fmt.Sprintf("n%d", i+1) != leaders[1] {
			via = s
		}
	}
	expect(t, do(t, "POST", via.AdminURL+"/admin/v1/cluster/transfer", via.AdminToken, map[string]any{"group": 1}), http.StatusOK, "")
	eventually(t, "group 1 elects again", func() error {
		if st := groupsStatusOf(t, nodes[0]); st.Groups[1].Term <= termBefore || st.Groups[1].Leader == "" {
			return fmt.Errorf("group 1: term %d, leader %q", st.Groups[1].Term, st.Groups[1].Leader)
		}
		return nil
	})
	leaders = oneGroupPerNode(t, nodes)
	before := groupsStatusOf(t, nodes[1])

	// Kill the leader of group 0: only group 0 elects again.
	var dead *server
	for i, s := range nodes {
		if fmt.Sprintf("n%d", i+1) == leaders[0] {
			dead = s
		}
	}
	dead.kill()
	var survivors []*server
	for _, s := range nodes {
		if s != dead {
			survivors = append(survivors, s)
		}
	}
	for _, a := range accounts {
		for _, s := range survivors {
			for _, id := range cards[a.ID] {
				r := retry503(t, func() response { return do(t, "GET", s.URL+"/v1/portfolio/cards/"+id, keys[a.ID], nil) })
				expect(t, r, http.StatusOK, "")
			}
		}
	}
	after := groupsStatusOf(t, survivors[0])
	if after.Groups[0].Leader == leaders[0] || after.Groups[0].Leader == "" {
		t.Errorf("group 0's leader after its leader died: %q", after.Groups[0].Leader)
	}
	for g := 1; g < 3; g++ {
		if after.Groups[g].Leader != before.Groups[g].Leader || after.Groups[g].Term != before.Groups[g].Term {
			t.Errorf("group %d was disturbed by group 0's failover: leader %s term %d, was %s term %d",
				g, after.Groups[g].Leader, after.Groups[g].Term, before.Groups[g].Leader, before.Groups[g].Term)
		}
	}
	// Writes go on for every account, and the node that comes back
	// serves them all.
	for _, a := range accounts {
		r := retry503(t, func() response {
			return do(t, "POST", survivors[0].URL+"/v1/portfolio/cards", keys[a.ID], map[string]any{"address": addressFor(3)}, "Idempotency-Key", a.ID+"-after")
		})
		expect(t, r, http.StatusCreated, "")
	}
	dead.start(dead.extra...)
	for _, a := range accounts {
		r := retry503(t, func() response { return do(t, "GET", dead.URL+"/v1/portfolio/cards", keys[a.ID], nil) })
		expect(t, r, http.StatusOK, "")
		if n := len(r.JSON(t)["cards"].([]any)); n != 4 {
			t.Errorf("account %s has %d cards through the restarted node, want 4", a.ID, n)
		}
	}
}

// addressFor is a distinct valid address per card of an account.
func addressFor(i int) string {
	return []string{
		"1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa",
		"3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy",
		"bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq",
		"bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4",
	}[i]
}

// TestShardedSlotMovesOverHTTP: an operator moves the slot of an account
// that its agent is writing through every node. Writes during the move
// are answered 503 with Retry-After and retried; none acknowledged is
// lost, and afterwards the account is served from its new group.
func TestShardedSlotMovesOverHTTP(t *testing.T) {
	t.Parallel()
	nodes := startCluster(t, 3, "--groups", "2")
	const password = "correct horse battery"
	r := retry503(t, func() response {
		return do(t, "POST", nodes[0].AdminURL+"/admin/v1/accounts", nodes[0].AdminToken, map[string]any{"plan": "base", "password": password})
	})
	expect(t, r, http.StatusCreated, "")
	a := account{ID: r.JSON(t)["account_id"].(string), OwnerSecret: r.JSON(t)["owner_secret"].(string), Password: password}
	r = retry503(t, func() response {
		return do(t, "POST", nodes[1].URL+"/owner/v1/keys", a.OwnerSecret, map[string]any{"capability": "write", "name": "agent"})
	})
	expect(t, r, http.StatusCreated, "")
	key := r.JSON(t)["key"].(string)
	r = retry503(t, func() response {
		return do(t, "POST", nodes[2].URL+"/v1/portfolio/cards", key, map[string]any{"address": addressFor(0)}, "Idempotency-Key", "first-card-of-the-move-test")
	})
	expect(t, r, http.StatusCreated, "")
	card := r.JSON(t)["card"].(map[string]any)
	path, version := "/v1/portfolio/cards/"+card["id"].(string), card["version"].(string)

	var from int
	for _, g := range groupsStatusOf(t, nodes[0]).Groups {
		if g.Accounts == 1 {
			from = g.Group
		}
	}
	// Mistakes are refused, saying why.
	expect(t, do(t, "POST", nodes[0].AdminURL+"/admin/v1/cluster/slots/move", nodes[0].AdminToken, map[string]any{"account": a.ID, "to": 2}), http.StatusUnprocessableEntity, "VALIDATION")
	expect(t, do(t, "POST", nodes[0].AdminURL+"/admin/v1/cluster/slots/move", nodes[0].AdminToken, map[string]any{"account": a.ID, "to": from}), http.StatusConflict, "CONFLICT")
	expect(t, do(t, "POST", nodes[0].AdminURL+"/admin/v1/cluster/slots/move", nodes[0].AdminToken, map[string]any{"account": "nosuchaccount", "to": 0}), http.StatusNotFound, "NOT_FOUND")
	expect(t, do(t, "POST", nodes[0].AdminURL+"/admin/v1/cluster/slots/move", nodes[0].AdminToken, map[string]any{"slot": 4096, "to": 0}), http.StatusUnprocessableEntity, "VALIDATION")

	// The agent writes without pause, each write through the next node.
	var acked string
	retried := 0
	done := make(chan struct{})
	stop := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			name := fmt.Sprintf("write %d", i)
			r := do(t, "PATCH", nodes[i%3].URL+path, key, map[string]any{"expected_version": version, "name": name})
			switch r.Status {
			case http.StatusOK:
				acked, version = name, r.JSON(t)["card"].(map[string]any)["version"].(string)
			case http.StatusServiceUnavailable:
				// Every refusal of the move says when to retry: the
				// groups' own, and a node's whose directory flipped
				// before the forwarding node's.
				if r.Header.Get("Retry-After") == "" {
					t.Errorf("a 503 during the move without Retry-After: %s", r.Body)
				}
				retried++
				time.Sleep(50 * time.Millisecond)
			default:
				t.Errorf("write %d: %d %s", i, r.Status, r.Body)
				return
			}
		}
	}()
	time.Sleep(300 * time.Millisecond)
	mv := do(t, "POST", nodes[1].AdminURL+"/admin/v1/cluster/slots/move", nodes[1].AdminToken, map[string]any{"account": a.ID, "to": 1 - from})
	expect(t, mv, http.StatusAccepted, "")
	if m := mv.JSON(t); int(m["from"].(float64)) != from || int(m["to"].(float64)) != 1-from {
		t.Fatalf("the move recorded: %s", mv.Body)
	}
	eventually(t, "the move ends", func() error {
		for _, s := range nodes {
			st := groupsStatusOf(t, s)
			if st.Groups[1-from].Accounts != 1 || st.Groups[from].Accounts != 0 {
				return fmt.Errorf("%s: accounts per group %d/%d", s.URL, st.Groups[0].Accounts, st.Groups[1].Accounts)
			}
		}
		return nil
	})
	time.Sleep(300 * time.Millisecond)
	close(stop)
	<-done
	for _, s := range nodes {
		r := retry503(t, func() response { return do(t, "GET", s.URL+path, key, nil) })
		expect(t, r, http.StatusOK, "")
		if got := r.JSON(t)["card"].(map[string]any)["name"]; got != acked {
			t.Errorf("through %s the card is named %q; the last acknowledged write named it %q", s.URL, got, acked)
		}
	}
	if retried == 0 {
		t.Error("no write met the move: the load did not overlap it")
	}

	// A sharded node's backup restores into a new cluster of one group.
	backup := retry503(t, func() response { return do(t, "GET", nodes[2].AdminURL+"/admin/v1/backup", nodes[2].AdminToken, nil) })
	expect(t, backup, http.StatusOK, "")
	fresh := startServer(t)
	expect(t, do(t, "POST", fresh.AdminURL+"/admin/v1/restore", fresh.AdminToken, backup.Body), http.StatusOK, "")
	r = do(t, "GET", fresh.URL+path, key, nil)
	expect(t, r, http.StatusOK, "")
	if got := r.JSON(t)["card"].(map[string]any)["name"]; got != acked {
		t.Errorf("the restored card is named %q, want %q", got, acked)
	}
	// And back into the sharded cluster, through any node: a write made
	// since is undone.
	expect(t, retry503(t, func() response {
		return do(t, "PATCH", nodes[0].URL+path, key, map[string]any{"expected_version": version, "name": "after the backup"})
	}), http.StatusOK, "")
	expect(t, do(t, "POST", nodes[2].AdminURL+"/admin/v1/restore", nodes[2].AdminToken, backup.Body), http.StatusOK, "")
	for _, s := range nodes {
		r := retry503(t, func() response { return do(t, "GET", s.URL+path, key, nil) })
		expect(t, r, http.StatusOK, "")
		if got := r.JSON(t)["card"].(map[string]any)["name"]; got != acked {
			t.Errorf("through %s after the restore the card is named %q, want %q", s.URL, got, acked)
		}
	}
	t.Logf("last acknowledged write %q; %d writes refused with 503 during the move and retried", acked, retried)
}

// TestSlotMovesNeedAShardedCluster: a cluster of one group has no slots to
// move and no group leaderships to drain, and says so; a move names a slot
// or an account, and a group.
func TestSlotMovesNeedAShardedCluster(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	for _, body := range []map[string]any{{"slot": 1, "to": 1}, {"to": 1}, {"slot": 1, "account": "x", "to": 1}} {
		r := do(t, "POST", s.AdminURL+"/admin/v1/cluster/slots/move", s.AdminToken, body)
		expect(t, r, http.StatusUnprocessableEntity, "VALIDATION")
	}
	if r := do(t, "POST", s.AdminURL+"/admin/v1/cluster/slots/move", s.AdminToken, map[string]any{"slot": 1, "to": 1}); !strings.Contains(string(r.Body), "--groups") {
		t.Errorf("the refusal does not say what is needed: %s", r.Body)
	}
	// Draining is for sharded clusters too; one group moves its leadership
	// with a transfer.
	r := do(t, "POST", s.AdminURL+"/admin/v1/cluster/drain", s.AdminToken, map[string]any{"id": "node1"})
	expect(t, r, http.StatusUnprocessableEntity, "VALIDATION")
	if !strings.Contains(string(r.Body), "/admin/v1/cluster/transfer") {
		t.Errorf("the refusal does not say what to do instead: %s", r.Body)
	}
}

// TestSiteOnAShardedClusterInABrowser: the owner's site on a sharded
// cluster, through every node: sign-in by login (the form names no
// account, so the edge finds it by the login), the panel, a key, a grant,
// a download, and the session cookie routing each page to the account's
// group leader from any node.
func TestSiteOnAShardedClusterInABrowser(t *testing.T) {
	t.Parallel()
	nodes := startCluster(t, 3, "--groups", "3")
	ftAwaitBalanced(t, nodes)
	o := siteSetUp(t, nodes[0], "sharded-owner")
	// The site through a node that does not lead the account's group (a
	// new cluster deals the slots out in turn), and the others below.
	group := int(cluster.SlotOf(o.ID)) % 3
	leader := groupsStatusOf(t, nodes[0]).Groups[group].Leader
	var others []*server
	for i, s := range nodes {
		if fmt.Sprintf("n%d", i+1) != leader {
			others = append(others, s)
		}
	}
	if len(others) != 2 {
		t.Fatalf("group %d's leader %q is not one of the nodes", group, leader)
	}
	o.siteURL = others[0].URL
	b := newBrowser(t)
	siteSignIn(t, b, o, "Sharded-Owner")
	key, _ := siteCreateKey(t, b, o, "on a sharded cluster", "write")
	owMe(t, nodes[2], key)
	b.open(o.siteURL + "/access")
	b.pick("#grant-"+o.cards[1], "read")
	expect(t, do(t, "GET", nodes[0].URL+"/v1/portfolio/cards/"+o.cards[1], key, nil), http.StatusOK, "")
	b.open(o.siteURL + "/downloads")
	_, data := b.download(`a[href="/downloads/history.csv"]`)
	rows := siteCSVRows(t, nodes[0], o, "combined on a sharded cluster", data, "/history.csv")
	if note := siteNoteRow(t, "combined on a sharded cluster", rows, o.noteTx); note != siteHostileNote {
		t.Fatalf("note on a sharded cluster %q", note)
	}
	for _, s := range nodes {
		b.setCookie(s.URL, "addrwatch_session", b.cookie("addrwatch_session").Value)
		b.open(s.URL + "/settings")
		if !strings.HasSuffix(b.location(), "/settings") || !b.hasText("sharded-owner") {
			t.Fatalf("%s answered %s", s.URL, b.location())
		}
	}
	b.assertNoConsoleErrors()
}

// TestShardedClusterReplacesANode: a node joins a sharded cluster (started
// with --join and the same --groups, added through any node's admin API),
// becomes a voter of every group and of the meta group once it has caught
// up; an old node is drained, so that killing it costs no election, and
// removed from every group, and the cluster of the new node and the two
// others serves every account.
func TestShardedClusterReplacesANode(t *testing.T) {
	t.Parallel()
	nodes := startCluster(t, 3, "--groups", "2")
	ftAwaitBalanced(t, nodes)
	type owned struct{ key, card string }
	var accounts []owned
	for i := range 6 {
		via := nodes[i%3]
		a := via.createAccount(t, "base")
		key := via.createKey(t, a, "write")
		r := do(t, "POST", via.URL+"/v1/portfolio/cards", key, map[string]any{"address": addressFor(0)}, "Idempotency-Key", fmt.Sprintf("replace-a-node-card-%d", i))
		expect(t, r, http.StatusCreated, "")
		accounts = append(accounts, owned{key, r.JSON(t)["card"].(map[string]any)["id"].(string)})
	}

	n4 := &server{t: t, Dir: t.TempDir(), AdminToken: "replace-admin-token-4"}
	n4.httpAddr, n4.adminAddr, n4.raftAddr = freeAddr(t), freeAddr(t), freeAddr(t)
	n4.URL, n4.AdminURL = "http://"+n4.httpAddr, "http://"+n4.adminAddr
	n4.extra = append([]string{"--node-id", "n4", "--join", "--groups", "2"}, nodeCertArgs(t, nodes[0].certs, "n4")...)
	n4.launch(n4.extra...)
	t.Cleanup(n4.stop)
	r := do(t, "POST", nodes[1].AdminURL+"/admin/v1/cluster/nodes", nodes[1].AdminToken, map[string]any{"id": "n4", "raft_addr": n4.raftAddr})
	expect(t, r, http.StatusOK, "")
	if got := r.JSON(t)["suffrage"]; got != "nonvoter" {
		t.Fatalf("added n4 as %v, want a non-voter until it has caught up", got)
	}
	votes := func(st groupsStatus, id string) bool {
		for _, members := range append([][]member{st.Meta.Nodes}, groupMembers(st)...) {
			if !slices.ContainsFunc(members, func(m member) bool { return m.ID == id && m.Suffrage == "voter" }) {
				return false
			}
		}
		return true
	}
	eventually(t, "n4 votes in every group", func() error {
		if st := groupsStatusOf(t, nodes[0]); !votes(st, "n4") {
			return fmt.Errorf("meta %+v, groups %+v", st.Meta.Nodes, groupMembers(st))
		}
		return nil
	})

	// A drain names a node of the cluster.
	expect(t, do(t, "POST", nodes[2].AdminURL+"/admin/v1/cluster/drain", nodes[2].AdminToken, map[string]any{}), http.StatusUnprocessableEntity, "VALIDATION")
	expect(t, do(t, "POST", nodes[2].AdminURL+"/admin/v1/cluster/drain", nodes[2].AdminToken, map[string]any{"id": "nobody"}), http.StatusNotFound, "NOT_FOUND")
	// Drained first, n1 leads nothing when it is killed: no group elects.
	r = do(t, "POST", nodes[2].AdminURL+"/admin/v1/cluster/drain", nodes[2].AdminToken, map[string]any{"id": "n1"})
	expect(t, r, http.StatusOK, "")
	var terms []uint64
	eventually(t, "n1 leads no group", func() error {
		st := groupsStatusOf(t, nodes[1])
		terms = terms[:0]
		for _, g := range st.Groups {
			if g.Leader == "n1" || g.Leader == "" {
				return fmt.Errorf("group %d led by %q", g.Group, g.Leader)
			}
			terms = append(terms, g.Term)
		}
		return nil
	})
	nodes[0].kill()
	expect(t, retry503(t, func() response {
		return do(t, "DELETE", nodes[2].AdminURL+"/admin/v1/cluster/nodes/n1", nodes[2].AdminToken, nil)
	}), http.StatusNoContent, "")
	for i, g := range groupsStatusOf(t, nodes[1]).Groups {
		if g.Term != terms[i] {
			t.Errorf("group %d elected again (term %d, was %d) though the node killed led nothing", g.Group, g.Term, terms[i])
		}
	}
	eventually(t, "n1 is gone from every group", func() error {
		st := groupsStatusOf(t, n4)
		for _, members := range append([][]member{st.Meta.Nodes}, groupMembers(st)...) {
			if slices.ContainsFunc(members, func(m member) bool { return m.ID == "n1" }) || len(members) != 3 {
				return fmt.Errorf("meta %+v, groups %+v", st.Meta.Nodes, groupMembers(st))
			}
		}
		return nil
	})
	for _, a := range accounts {
		r := retry503(t, func() response { return do(t, "GET", n4.URL+"/v1/portfolio/cards/"+a.card, a.key, nil) })
		expect(t, r, http.StatusOK, "")
		w := retry503(t, func() response {
			return do(t, "POST", nodes[1].URL+"/v1/portfolio/cards", a.key, map[string]any{"address": addressFor(1)}, "Idempotency-Key", "replace-a-node-after-"+a.card)
		})
		expect(t, w, http.StatusCreated, "")
	}
}

// member is one member of a group as the sharded status shows it.
type member struct {
	ID       string `json:"id"`
	Suffrage string `json:"suffrage"`
}

// groupMembers lists every data group's members.
func groupMembers(st groupsStatus) [][]member {
	var all [][]member
	for _, g := range st.Groups {
		all = append(all, g.Nodes)
	}
	return all
}
