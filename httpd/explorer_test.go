package httpd

import (
	"context"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/addrwatch/addrwatch/actors"
	"github.com/addrwatch/addrwatch/cluster/clustererr"
)

// While a voter runs a release before feature version 8 (a rolling
// upgrade), choosing an explorer is 503 with Retry-After, nothing is
// written, and the choice is still none; an unknown name is 422 before
// anything is proposed.
func TestOwnerExplorerDuringAnUpgrade(t *testing.T) {
	t.Parallel()
	store := newMemoryStore(t)
	c := newClock()
	s := New(Config{Store: store, Now: c.now, PasswordCost: bcrypt.MinCost})
	created, err := s.CreateAccount(context.Background(), actors.PlanBase, ownerTestPassword, "")
	if err != nil {
		t.Fatal(err)
	}
	o := &ownerTest{t: t, server: s, clock: c, handler: s.PublicHandler(), account: created, password: ownerTestPassword}
	proposed := 0
	store.beforePropose = func(cmd *actors.Command) error {
		if _, sets := cmd.Payload.(*actors.SetExplorer); sets {
			proposed++
			return &clustererr.VersionError{Want: uint32(actors.KindSetExplorer.FeatureVersion()), Behind: []string{"node-2 (version 7)"}}
		}
		return nil
	}
	status, retry, body := o.send("192.0.2.1", "PUT", "/owner/v1/explorer", created.OwnerSecret, map[string]string{"explorer": "mempool.space"})
	if status != 503 || retry <= 0 || body["code"] != "HTTP_ERROR" || body["error"] == "" {
		t.Fatalf("during an upgrade: %d, Retry-After %d, %v", status, retry, body)
	}
	status, _, body = o.send("192.0.2.1", "PUT", "/owner/v1/explorer", created.OwnerSecret, map[string]string{"explorer": "https://mempool.space.evil.example"})
	if status != 422 || body["code"] != "VALIDATION" || proposed != 1 {
		t.Fatalf("an unknown explorer: %d %v, %d proposals", status, body, proposed)
	}
	if status, _, body = o.send("192.0.2.1", "GET", "/owner/v1/explorer", created.OwnerSecret, nil); status != 200 || body["explorer"] != "none" {
		t.Fatalf("after: %d %v", status, body)
	}
}
