package edge

import (
	"net"
	"testing"
)

func TestConnCapCountsEachClientAddress(t *testing.T) {
	exempt := net.ParseIP("10.0.0.9")
	c := newConnCap(2, func(ip net.IP) bool { return ip.Equal(exempt) })
	addr := func(ip string) net.Addr { return &net.TCPAddr{IP: net.ParseIP(ip), Port: 40000} }

	r1, ok1 := c.admit(addr("192.0.2.1"))
	_, ok2 := c.admit(addr("192.0.2.1"))
	if _, ok3 := c.admit(addr("192.0.2.1")); !ok1 || !ok2 || ok3 {
		t.Fatalf("admitted %v %v %v, want the third refused", ok1, ok2, ok3)
	}
	if _, ok := c.admit(addr("192.0.2.2")); !ok {
		t.Fatal("another address was refused")
	}
	if _, ok := c.admit(addr("::ffff:192.0.2.1")); ok {
		t.Fatal("the IPv4-mapped form of a full address was admitted")
	}
	r1()
	if _, ok := c.admit(addr("192.0.2.1")); !ok {
		t.Fatal("a slot freed by a close was not reused")
	}
	// IPv6 counts by /64.
	c.admit(addr("2001:db8:1:2::1"))
	c.admit(addr("2001:db8:1:2::2"))
	if _, ok := c.admit(addr("2001:db8:1:2:ffff::3")); ok {
		t.Fatal("a third address of the same /64 was admitted")
	}
	if _, ok := c.admit(addr("2001:db8:1:3::1")); !ok {
		t.Fatal("another /64 was refused")
	}
	for range 5 {
		if _, ok := c.admit(addr("10.0.0.9")); !ok {
			t.Fatal("an exempt address was capped")
		}
	}
}
