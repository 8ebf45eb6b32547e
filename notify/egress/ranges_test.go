package egress

import (
	"net/netip"
	"testing"
)

// refusedCases are one or more addresses of every refused block, in each
// form that reaches it: plain, IPv4-mapped, NAT64 and 6to4.
var refusedCases = []struct {
	addr  string
	class AddressClass
}{
	{"127.0.0.1", Loopback},
	{"127.255.255.254", Loopback},
	{"::1", Loopback},
	{"::ffff:127.0.0.1", Loopback},
	{"64:ff9b::7f00:1", Loopback},
	{"2002:7f00:1::1", Loopback},
	{"10.0.0.1", Private},
	{"172.16.0.1", Private},
	{"172.31.255.255", Private},
	{"192.168.1.1", Private},
	{"::ffff:192.168.1.1", Private},
	{"64:ff9b::c0a8:101", Private},
	{"2002:c0a8:101::", Private},
	{"fc00::1", Private},
	{"fd12:3456::1", Private},
	{"fec0::1", Private},
	{"169.254.169.254", LinkLocal},
	{"::ffff:169.254.169.254", LinkLocal},
	{"64:ff9b::a9fe:a9fe", LinkLocal},
	{"fe80::1", LinkLocal},
	{"fe80::1%eth0", LinkLocal},
	{"100.64.0.1", Shared},
	{"100.127.255.254", Shared},
	{"0.0.0.0", Unspecified},
	{"::", Unspecified},
	{"::ffff:0.0.0.0", Unspecified},
	{"0.1.2.3", ThisNetwork},
	{"224.0.0.1", Multicast},
	{"239.255.255.250", Multicast},
	{"ff02::1", Multicast},
	{"ff05::1:3", Multicast},
	{"255.255.255.255", Broadcast},
	{"192.0.2.1", Documentation},
	{"198.51.100.7", Documentation},
	{"203.0.113.9", Documentation},
	{"2001:db8::1", Documentation},
	{"3fff::1", Documentation},
	{"198.18.0.1", Benchmarking},
	{"198.19.255.255", Benchmarking},
	{"2001:2::1", Benchmarking},
	{"240.0.0.1", Reserved},
	{"192.0.0.170", Reserved},
	{"192.88.99.1", Reserved},
	{"::7f00:1", Reserved}, // IPv4-compatible ::127.0.0.1
	{"64:ff9b:1::a00:1", Reserved},
	{"100::1", Reserved},
	{"2001::1", Reserved}, // Teredo
	{"2001:10::1", Reserved},
	{"2001:20::1", Reserved},
	{"4000::1", Reserved}, // outside 2000::/3: unallocated
}

// privateOpened are the classes AllowPrivate lets through.
var privateOpened = map[AddressClass]bool{Loopback: true, Private: true, LinkLocal: true, Shared: true}

func TestClassOfRefusedAddresses(t *testing.T) {
	for _, tc := range refusedCases {
		addr := netip.MustParseAddr(tc.addr)
		if got := ClassOf(addr); got != tc.class {
			t.Errorf("ClassOf(%s) = %q, want %q", tc.addr, got, tc.class)
		}
		if Allowed(addr, false) {
			t.Errorf("%s (%s) allowed", tc.addr, tc.class)
		}
		if got := Allowed(addr, true); got != privateOpened[tc.class] {
			t.Errorf("%s (%s) with AllowPrivate: allowed %v, want %v", tc.addr, tc.class, got, privateOpened[tc.class])
		}
	}
}

func TestClassOfPublicAddresses(t *testing.T) {
	for _, s := range []string{
		"8.8.8.8", "1.1.1.1", "93.184.215.14", "100.63.255.255", "100.128.0.0",
		"172.15.255.255", "172.32.0.0", "192.0.1.255", "198.17.255.255", "223.255.255.255",
		"2606:4700:4700::1111", "2a00:1450:4001::200e",
		"::ffff:8.8.8.8",   // mapped public
		"64:ff9b::808:808", // NAT64 of 8.8.8.8
		"2002:808:808::1",  // 6to4 of 8.8.8.8
	} {
		addr := netip.MustParseAddr(s)
		if got := ClassOf(addr); got != Public || !Allowed(addr, false) {
			t.Errorf("ClassOf(%s) = %q, Allowed %v; want public", s, got, Allowed(addr, false))
		}
	}
	if ClassOf(netip.Addr{}) == Public {
		t.Error("the zero Addr is public")
	}
}

// FuzzClassOfForms checks that every IPv6 form of an IPv4 address that a
// stack or a translator would take to that IPv4 address gets its class.
func FuzzClassOfForms(f *testing.F) {
	for _, s := range []string{"127.0.0.1", "10.1.2.3", "169.254.169.254", "8.8.8.8", "0.0.0.0", "255.255.255.255"} {
		f.Add(netip.MustParseAddr(s).AsSlice())
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if len(raw) != 4 {
			return
		}
		v4 := netip.AddrFrom4([4]byte(raw))
		want := ClassOf(v4)
		var nat64, sixToFour [16]byte
		nat64[1], nat64[2], nat64[3] = 0x64, 0xff, 0x9b
		copy(nat64[12:], raw)
		sixToFour[0], sixToFour[1] = 0x20, 0x02
		copy(sixToFour[2:], raw)
		for name, addr := range map[string]netip.Addr{
			"mapped": netip.AddrFrom16(v4.As16()),
			"nat64":  netip.AddrFrom16(nat64),
			"6to4":   netip.AddrFrom16(sixToFour),
		} {
			if got := ClassOf(addr); got != want {
				t.Fatalf("%s form %s of %s: %q, want %q", name, addr, v4, got, want)
			}
		}
	})
}
