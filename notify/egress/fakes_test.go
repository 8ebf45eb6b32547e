package egress

import (
	"context"
	"net"
	"net/netip"
	"sync"
	"testing"
)

// publicAddr stands for a receiver on the internet. No test connects to
// it: the test dialers send every connection to a server on loopback.
var publicAddr = netip.MustParseAddr("93.184.215.14")

// fakeResolver answers the n-th lookup with answers[n] (the last one once
// they run out) and counts the lookups.
type fakeResolver struct {
	mu      sync.Mutex
	answers [][]netip.Addr
	lookups int
}

func resolveTo(answers ...[]netip.Addr) *fakeResolver { return &fakeResolver{answers: answers} }

func (r *fakeResolver) LookupNetIP(_ context.Context, _, _ string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	answer := r.answers[min(r.lookups, len(r.answers)-1)]
	r.lookups++
	return append([]netip.Addr(nil), answer...), nil
}

func (r *fakeResolver) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lookups
}

// loopbackDialer records every address it is asked to dial and connects
// to server instead, so that a test can pretend a public address answers.
type loopbackDialer struct {
	server string
	mu     sync.Mutex
	asked  []string
}

func (d *loopbackDialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	d.mu.Lock()
	d.asked = append(d.asked, address)
	d.mu.Unlock()
	var nd net.Dialer
	return nd.DialContext(ctx, network, d.server)
}

func (d *loopbackDialer) dials() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.asked...)
}

// noDialer fails the test when a connection is attempted.
type noDialer struct{ t *testing.T }

func (d noDialer) DialContext(_ context.Context, _, address string) (net.Conn, error) {
	d.t.Errorf("a connection to %s was attempted", address)
	return nil, net.ErrClosed
}

// blockingDialer never connects: it waits for its context to end.
type blockingDialer struct{}

func (blockingDialer) DialContext(ctx context.Context, _, _ string) (net.Conn, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

func newClient(t *testing.T, cfg Config) *Client {
	t.Helper()
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// portOf is the port of a server's address, for a URL that names
// another host but must reach that server through a loopbackDialer.
func portOf(t *testing.T, addr string) string {
	t.Helper()
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	return port
}
