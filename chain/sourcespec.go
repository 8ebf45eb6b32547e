package chain

import (
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
)

// SourceKind is the kind of chain source --chain names.
type SourceKind string

// The kinds of chain source.
const (
	SourceSim      SourceKind = "sim"      // the embedded simulated chain
	SourceEsplora  SourceKind = "esplora"  // an Esplora REST API
	SourceBtcd     SourceKind = "btcd"     // btcd's JSON-RPC (--addrindex --txindex)
	SourceElectrum SourceKind = "electrum" // an Electrum server (electrs, Fulcrum, ElectrumX)
)

// SourceSpec is a parsed --chain value.
type SourceSpec struct {
	Kind SourceKind
	// URL is an Esplora's base URL, or btcd's RPC URL with its user and
	// password (https unless the host is a loopback address).
	URL *url.URL
	// Address is an Electrum server's host:port.
	Address string
	// TLS says an Electrum server is reached over TLS (electrums:).
	TLS bool
}

// ParseSourceSpec reads a --chain (or --upstream) value: sim,
// esplora:URL (or the URL alone, as --upstream took it),
// btcd:https://USER:PASS@HOST:PORT, electrum:HOST:PORT or
// electrums:HOST:PORT. Its errors never repeat the value, which may hold
// a password.
func ParseSourceSpec(s string) (SourceSpec, error) {
	kind, rest, _ := strings.Cut(s, ":")
	switch SourceKind(kind) {
	case SourceSim:
		if s != string(SourceSim) {
			return SourceSpec{}, fmt.Errorf("%w: sim takes nothing after it", ErrInvalidArgument)
		}
		return SourceSpec{Kind: SourceSim}, nil
	case SourceEsplora:
		return parseEsplora(rest)
	case "http", "https":
		return parseEsplora(s)
	case SourceBtcd:
		u, err := url.Parse(rest)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Port() == "" {
			return SourceSpec{}, fmt.Errorf("%w: btcd: wants https://USER:PASS@HOST:PORT, btcd's RPC address", ErrInvalidArgument)
		}
		if _, hasPassword := u.User.Password(); !hasPassword || u.User.Username() == "" {
			return SourceSpec{}, fmt.Errorf("%w: btcd: wants its RPC user and password in the URL (https://USER:PASS@HOST:PORT)", ErrInvalidArgument)
		}
		if (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
			return SourceSpec{}, fmt.Errorf("%w: btcd: the URL is HOST:PORT alone, no path or query", ErrInvalidArgument)
		}
		if u.Scheme == "http" && !isLoopbackHost(u.Hostname()) {
			return SourceSpec{}, fmt.Errorf("%w: btcd: plain http would send the RPC password in the clear; use https (with --chain-cert for btcd's own certificate)", ErrInvalidArgument)
		}
		return SourceSpec{Kind: SourceBtcd, URL: u}, nil
	case SourceElectrum, "electrums":
		host, port, err := net.SplitHostPort(rest)
		if err != nil || host == "" || port == "" {
			return SourceSpec{}, fmt.Errorf("%w: %s: wants HOST:PORT", ErrInvalidArgument, kind)
		}
		return SourceSpec{Kind: SourceElectrum, Address: rest, TLS: kind == "electrums"}, nil
	}
	return SourceSpec{}, fmt.Errorf("%w: the chain source must be sim, esplora:URL, btcd:URL, electrum:HOST:PORT or electrums:HOST:PORT", ErrInvalidArgument)
}

func parseEsplora(raw string) (SourceSpec, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return SourceSpec{}, fmt.Errorf("%w: esplora: wants an http(s) base URL such as https://mempool.space/api", ErrInvalidArgument)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return SourceSpec{}, fmt.Errorf("%w: esplora: the base URL has no query or fragment", ErrInvalidArgument)
	}
	return SourceSpec{Kind: SourceEsplora, URL: u}, nil
}

// String is the spec as --chain takes it, with any password replaced by
// "xxxxx": the form to log or show.
func (s SourceSpec) String() string {
	switch s.Kind {
	case SourceSim:
		return string(SourceSim)
	case SourceElectrum:
		if s.TLS {
			return "electrums:" + s.Address
		}
		return "electrum:" + s.Address
	}
	if s.URL == nil {
		return string(s.Kind)
	}
	return string(s.Kind) + ":" + s.URL.Redacted()
}

// Host is the host the source is reached at; empty for the sim.
func (s SourceSpec) Host() string {
	switch {
	case s.Kind == SourceElectrum:
		host, _, _ := net.SplitHostPort(s.Address)
		return host
	case s.URL != nil:
		return s.URL.Hostname()
	}
	return ""
}

// ThirdParty reports whether the source is someone else's server: neither
// the sim nor on a loopback or private address. It learns every address
// the owners watch, which the server warns about at start.
func (s SourceSpec) ThirdParty() bool {
	host := s.Host()
	if host == "" {
		return false
	}
	if isLoopbackHost(host) {
		return false
	}
	ip, err := netip.ParseAddr(host)
	return err != nil || !(ip.IsPrivate() || ip.IsLinkLocalUnicast())
}

func isLoopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}
