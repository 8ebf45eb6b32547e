package cluster

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"

	"github.com/addrwatch/addrwatch/cluster/clustererr"
)

// ErrInvalidMember means a node ID or raft address is not one a cluster
// can use.
var ErrInvalidMember = clustererr.ErrInvalidMember

// nodeIDCharsMax bounds a node ID: it travels in every raft RPC and names
// the node in logs and URLs.
const nodeIDCharsMax = 64

// ValidateNodeID accepts 1 to 64 ASCII letters, digits, '.', '_' and
// '-', starting with a letter or a digit: an ID that reads plainly in a
// log line and needs no escaping in a URL path.
func ValidateNodeID(id string) error {
	if id == "" || len(id) > nodeIDCharsMax {
		return fmt.Errorf("%w: a node id is 1 to %d characters, got %d", ErrInvalidMember, nodeIDCharsMax, len(id))
	}
	for i, c := range id {
		letterOrDigit := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if !letterOrDigit && (i == 0 || (c != '.' && c != '_' && c != '-')) {
			return fmt.Errorf("%w: node id %q: use letters, digits, '.', '_' and '-', starting with a letter or a digit", ErrInvalidMember, id)
		}
	}
	return nil
}

// ValidateRaftAddr accepts host:port where the host is an IP address
// other nodes can dial (not 0.0.0.0 or ::) or a DNS name, and the port is
// 1 to 65535. It does not resolve the name: a node being added may not be
// in DNS yet.
func ValidateRaftAddr(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%w: raft address %q is not host:port", ErrInvalidMember, addr)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 || strconv.Itoa(n) != port {
		return fmt.Errorf("%w: raft address %q: the port must be a number from 1 to 65535", ErrInvalidMember, addr)
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		if ip.IsUnspecified() {
			return fmt.Errorf("%w: raft address %q: other nodes cannot dial %s", ErrInvalidMember, addr, host)
		}
		return nil
	}
	if !isDNSName(host) {
		return fmt.Errorf("%w: raft address %q: the host must be an IP address or a DNS name", ErrInvalidMember, addr)
	}
	return nil
}

// isDNSName reports whether host is a DNS name: dot-separated labels of
// letters, digits and inner hyphens, each 1 to 63 characters, 253 in all,
// the last not all digits (that would be a mistyped IPv4 address).
func isDNSName(host string) bool {
	host = strings.TrimSuffix(host, ".")
	if host == "" || len(host) > 253 {
		return false
	}
	labels := strings.Split(host, ".")
	if _, err := strconv.Atoi(labels[len(labels)-1]); err == nil {
		return false
	}
	for _, label := range labels {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, c := range label {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}
