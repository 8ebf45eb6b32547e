package system_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// A sharded cluster (--groups): three addrwatchd processes that each run
// the meta group and three data groups over one node port.

type groupsStatus struct {
	NodeID string `json:"node_id"`
	Meta   struct {
		Groups int    `json:"groups"`
		Leader string `json:"leader"`
	} `json:"meta"`
	Groups []struct {
		Group    int    `json:"group"`
		Slots    int    `json:"slots"`
		Leader   string `json:"leader"`
		Accounts int    `json:"accounts"`
		Term     uint64 `json:"term"`
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

// retry503 repeats a request while it answers 503, for up to 15 s, as a
// client should: a group without a leader yet, or one handing its
// leadership over (the nodes balance the leaders in the first seconds),
// refuses before anything is written.
func retry503(t *testing.T, send func() response) response {
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

	// What a sharded cluster does not offer yet is refused, saying so.
	r := do(t, "POST", nodes[0].AdminURL+"/admin/v1/accounts", nodes[0].AdminToken, map[string]any{"plan": "base", "password": "correct horse battery", "login": "shard-owner"})
	expect(t, r, http.StatusUnprocessableEntity, "VALIDATION")
	if !strings.Contains(string(r.Body), "--groups") {
		t.Errorf("the refusal of a login does not say why: %s", r.Body)
	}
	expect(t, do(t, "POST", nodes[0].AdminURL+"/admin/v1/cluster/transfer", nodes[0].AdminToken, map[string]any{}), http.StatusUnprocessableEntity, "VALIDATION")

	// The leaders spread one group per node.
	var leaders map[int]string
	eventually(t, "one group led by each node", func() error {
		st := groupsStatusOf(t, nodes[0])
		leaders = map[int]string{}
		seen := map[string]bool{}
		for _, g := range st.Groups {
			leaders[g.Group] = g.Leader
			seen[g.Leader] = true
		}
		if len(seen) != 3 || seen[""] {
			return fmt.Errorf("leaders %v", leaders)
		}
		return nil
	})
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
