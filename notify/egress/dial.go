package egress

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
)

// checkedKey is the context key under which a request carries the
// addresses its host resolved to and passed the checks.
type checkedKey struct{}

// checked is the one answer of the one lookup of a request's host: the
// dial uses these addresses and never asks a resolver again, so a name
// whose answer changes between check and connect (DNS rebinding) cannot
// slip a refused address in.
type checked struct {
	hostPort string
	addrs    []netip.Addr
}

// resolve looks t's host up once (an IP literal is its own answer) and
// checks every address it resolves to: one refused address refuses the
// request, since a name that mixes public and private answers is either
// misconfigured or an attack.
func (c *Client) resolve(ctx context.Context, t Target) ([]netip.Addr, error) {
	var addrs []netip.Addr
	if addr, err := netip.ParseAddr(t.host); err == nil {
		addrs = []netip.Addr{addr}
	} else {
		lookupCtx, cancel := context.WithTimeout(ctx, c.cfg.ConnectTimeout)
		defer cancel()
		addrs, err = c.cfg.Resolver.LookupNetIP(lookupCtx, "ip", t.host)
		if err != nil {
			e := classify(t, err)
			e.Detail = "the host did not resolve: " + e.Detail
			return nil, e
		}
	}
	if len(addrs) == 0 {
		return nil, &Error{Class: ClassConnection, Target: t.String(), Detail: "the host resolved to no address"}
	}
	for i, addr := range addrs {
		// The address itself is left out of the detail: an owner
		// learns that the name is refused, not this network's view
		// of it.
		addr = addr.Unmap()
		if !Allowed(addr, c.cfg.AllowPrivate) {
			return nil, &Error{Class: ClassRefused, Target: t.String(),
				Detail: fmt.Sprintf("the host resolves to a %s address, which this server does not send to", ClassOf(addr))}
		}
		addrs[i] = addr
	}
	return addrs, nil
}

// dialChecked is the transport's only way to open a connection. It takes
// the addresses the request's lookup checked from the context, tries them
// in order within the connect timeout, and dials nothing else: a dial for
// any other host (a proxy, a name no check saw) is an error.
func (c *Client) dialChecked(ctx context.Context, network, hostPort string) (net.Conn, error) {
	pin, ok := ctx.Value(checkedKey{}).(checked)
	if !ok || pin.hostPort != hostPort {
		return nil, fmt.Errorf("egress: refusing to dial %s, which no check passed", hostPort)
	}
	_, portText, err := net.SplitHostPort(hostPort)
	if err != nil {
		return nil, err
	}
	port, err := strconv.ParseUint(portText, 10, 16)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, c.cfg.ConnectTimeout)
	defer cancel()
	var errs []error
	for _, addr := range pin.addrs {
		conn, err := c.cfg.Dialer.DialContext(ctx, network, netip.AddrPortFrom(addr, uint16(port)).String())
		if err == nil {
			return conn, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	return nil, errors.Join(errs...)
}
