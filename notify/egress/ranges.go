package egress

import (
	"net/netip"
)

// AddressClass names why an address is not a fit target for a request an
// owner asked for. The empty class is a public unicast address.
type AddressClass string

// The classes of refused addresses. Allowed by AllowPrivate are the ones a
// lab's receiver may sit on: loopback, private, link-local and shared
// (carrier-grade NAT) space. The rest are never a receiver anywhere.
const (
	Public        AddressClass = ""
	Loopback      AddressClass = "loopback"
	Private       AddressClass = "private"    // RFC 1918, IPv6 unique local fc00::/7
	LinkLocal     AddressClass = "link-local" // 169.254/16 (cloud metadata), fe80::/10
	Shared        AddressClass = "shared"     // 100.64/10, carrier-grade NAT (RFC 6598)
	Unspecified   AddressClass = "unspecified"
	ThisNetwork   AddressClass = "this-network" // 0.0.0.0/8: Linux connects it to the host itself
	Multicast     AddressClass = "multicast"
	Broadcast     AddressClass = "broadcast"
	Documentation AddressClass = "documentation"
	Benchmarking  AddressClass = "benchmarking"
	Reserved      AddressClass = "reserved"
)

// privateClasses are the classes AllowPrivate opens, as the server's
// --notify-allow-private promises: loopback, private and link-local
// addresses, and shared space, which is private space of a provider.
var privateClasses = map[AddressClass]bool{Loopback: true, Private: true, LinkLocal: true, Shared: true}

// rangeClass is one block of special-purpose addresses (IANA's IPv4 and
// IPv6 special-purpose registries, RFC 6890 and its updates).
type rangeClass struct {
	prefix netip.Prefix
	class  AddressClass
}

// v4Ranges are checked in order: the first match decides, so the
// broadcast address comes before the reserved 240/4 that holds it.
var v4Ranges = []rangeClass{
	{netip.MustParsePrefix("255.255.255.255/32"), Broadcast},
	{netip.MustParsePrefix("0.0.0.0/32"), Unspecified},
	{netip.MustParsePrefix("0.0.0.0/8"), ThisNetwork},
	{netip.MustParsePrefix("10.0.0.0/8"), Private},
	{netip.MustParsePrefix("100.64.0.0/10"), Shared},
	{netip.MustParsePrefix("127.0.0.0/8"), Loopback},
	{netip.MustParsePrefix("169.254.0.0/16"), LinkLocal},
	{netip.MustParsePrefix("172.16.0.0/12"), Private},
	// IETF protocol assignments: NAT64 discovery, DS-Lite, PCP anycast;
	// none of them is a web server.
	{netip.MustParsePrefix("192.0.0.0/24"), Reserved},
	{netip.MustParsePrefix("192.0.2.0/24"), Documentation},
	// The old 6to4 relay anycast (RFC 7526 deprecated it).
	{netip.MustParsePrefix("192.88.99.0/24"), Reserved},
	{netip.MustParsePrefix("192.168.0.0/16"), Private},
	{netip.MustParsePrefix("198.18.0.0/15"), Benchmarking},
	{netip.MustParsePrefix("198.51.100.0/24"), Documentation},
	{netip.MustParsePrefix("203.0.113.0/24"), Documentation},
	{netip.MustParsePrefix("224.0.0.0/4"), Multicast},
	{netip.MustParsePrefix("240.0.0.0/4"), Reserved},
}

// v6Ranges are checked after the forms that carry an IPv4 address
// (mapped, NAT64, 6to4) have been unwrapped and judged by their IPv4
// address.
var v6Ranges = []rangeClass{
	{netip.MustParsePrefix("::/128"), Unspecified},
	{netip.MustParsePrefix("::1/128"), Loopback},
	// The rest of ::/96 is the IPv4-compatible form, deprecated since
	// 2006 (RFC 4291); some stacks still route it to the IPv4 address.
	{netip.MustParsePrefix("::/96"), Reserved},
	// Local-use NAT64 (RFC 8215): the operator's own translator, whose
	// IPv4 side may be anything.
	{netip.MustParsePrefix("64:ff9b:1::/48"), Reserved},
	{netip.MustParsePrefix("100::/64"), Reserved}, // discard-only
	// Teredo hides its IPv4 address obfuscated; it is long dead, and
	// refusing it is simpler than unwrapping it.
	{netip.MustParsePrefix("2001::/32"), Reserved},
	{netip.MustParsePrefix("2001:2::/48"), Benchmarking},
	{netip.MustParsePrefix("2001:10::/28"), Reserved}, // ORCHID
	{netip.MustParsePrefix("2001:20::/28"), Reserved}, // ORCHIDv2
	{netip.MustParsePrefix("2001:db8::/32"), Documentation},
	{netip.MustParsePrefix("3fff::/20"), Documentation},
	{netip.MustParsePrefix("fc00::/7"), Private},
	{netip.MustParsePrefix("fe80::/10"), LinkLocal},
	{netip.MustParsePrefix("fec0::/10"), Private}, // site-local, deprecated
	{netip.MustParsePrefix("ff00::/8"), Multicast},
}

// globalUnicast is where IANA allocates IPv6 unicast; an address outside
// it that no entry above names is unallocated, and so no receiver.
var globalUnicast = netip.MustParsePrefix("2000::/3")

// Prefixes whose addresses carry an IPv4 address that a translator or
// relay on the path connects to: the address is judged by that one.
var (
	nat64Prefix = netip.MustParsePrefix("64:ff9b::/96") // RFC 6052
	sixToFour   = netip.MustParsePrefix("2002::/16")    // RFC 3056
)

// ClassOf says which special-purpose block addr falls in, Public when
// none. An IPv6 address that stands for an IPv4 one (::ffff:a.b.c.d,
// 64:ff9b::a.b.c.d, 2002:aabb:ccdd::) is judged by that IPv4 address, so
// ::ffff:127.0.0.1 is Loopback. A zoned address (fe80::1%eth0) keeps its
// class: the zone changes the interface, not the block.
func ClassOf(addr netip.Addr) AddressClass {
	addr = addr.WithZone("")
	if addr.Is4In6() {
		return classIn(addr.Unmap(), v4Ranges)
	}
	if addr.Is4() {
		return classIn(addr, v4Ranges)
	}
	if !addr.Is6() {
		return Reserved // the zero Addr: not an address at all
	}
	raw := addr.As16()
	if nat64Prefix.Contains(addr) {
		return classIn(netip.AddrFrom4([4]byte(raw[12:16])), v4Ranges)
	}
	if sixToFour.Contains(addr) {
		return classIn(netip.AddrFrom4([4]byte(raw[2:6])), v4Ranges)
	}
	if class := classIn(addr, v6Ranges); class != Public || globalUnicast.Contains(addr) {
		return class
	}
	return Reserved
}

func classIn(addr netip.Addr, ranges []rangeClass) AddressClass {
	for _, r := range ranges {
		if r.prefix.Contains(addr) {
			return r.class
		}
	}
	return Public
}

// Allowed says whether a request may connect to addr: a public address
// always, a private one (privateClasses) only when allowPrivate.
func Allowed(addr netip.Addr, allowPrivate bool) bool {
	class := ClassOf(addr)
	return class == Public || (allowPrivate && privateClasses[class])
}
