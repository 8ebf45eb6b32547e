package system_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"testing"
)

// TestOwnerBackOffThroughAFollowerIsPerClient: the owner credential
// ledgers live on the leader, and a follower forwards sign-ins to it over
// a node connection. The leader must see the client the follower saw, not
// the follower: two clients (two loopback source addresses) sign in
// through the same follower, and the one that guessed passwords backs off
// while the other still signs in. Were the leader to key its ledger on the
// forwarding node, the second client would share the first one's back-off.
func TestOwnerBackOffThroughAFollowerIsPerClient(t *testing.T) {
	t.Parallel()
	nodes := startCluster(t, 3)
	_, followers := leaderAndFollowers(t, nodes)
	follower := followers[0]
	attacked := follower.createAccount(t, "base")
	other := follower.createAccount(t, "base")
	attacker, owner := clientFrom(t, "127.0.0.2"), clientFrom(t, "127.0.0.3")
	signIn := func(c *http.Client, id, password string) int {
		t.Helper()
		body, _ := json.Marshal(map[string]string{"account_id": id, "password": password})
		resp, err := c.Post(follower.URL+"/owner/v1/sessions", "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatalf("sign-in through %s: %v", follower.URL, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	var statuses []int
	for range olFreeFailures + 3 {
		statuses = append(statuses, signIn(attacker, attacked.ID, "not the password"))
	}
	if last := statuses[len(statuses)-1]; last != http.StatusTooManyRequests {
		t.Fatalf("the guessing client was never held back through the follower: %v", statuses)
	}
	if got := signIn(owner, other.ID, "not the password either"); got != http.StatusUnauthorized {
		t.Fatalf("another client's first wrong password through the same follower: %d, want 401 (it shares the guesser's back-off)", got)
	}
	if got := signIn(owner, other.ID, other.Password); got != http.StatusCreated {
		t.Fatalf("another client's right password through the same follower: %d, want 201", got)
	}
}

// clientFrom returns an HTTP client whose connections leave from the
// loopback address ip, so that a server tells it apart from other local
// clients.
func clientFrom(t *testing.T, ip string) *http.Client {
	t.Helper()
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	tr := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		return d.DialContext(ctx, network, addr)
	}}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}
