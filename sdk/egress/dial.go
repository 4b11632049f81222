// This file: the dialer of an http.Transport that connects only where the
// list allows, under each rule for names.

package egress

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"syscall"
	"time"
)

// DialContext is the DialContext of an http.Transport that connects only
// where the list allows (the package doc says how under each rule). The
// transport must have no proxy: the check would see the proxy's address,
// not the destination's.
func (a *List) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	if a.opts.Names == VouchedNames {
		return a.dialVouched(ctx, network, addr)
	}
	return a.dialPublic(ctx, network, addr)
}

// dialPublic is DialContext under PublicNames: it resolves the host, checks
// every address against the list, and connects to a checked address — never
// resolving again, so that a DNS answer that changes between the check
// and the connection (rebinding) cannot lead anywhere unchecked.
func (a *List) dialPublic(ctx context.Context, network, addr string) (net.Conn, error) {
	host, portText, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	port, err := strconv.ParseUint(portText, 10, 16)
	if err != nil {
		return nil, fmt.Errorf("http: bad port in %q", addr)
	}
	ip, literal, err := LiteralIP(host)
	if err != nil {
		return nil, a.word(err)
	}
	var ips []netip.Addr
	name := ""
	if literal {
		ips = []netip.Addr{ip}
	} else {
		name = normalize(host)
		got, err := a.opts.Resolve(ctx, name)
		if err != nil {
			return nil, fmt.Errorf("http: resolve %s: %w", name, err)
		}
		if len(got) == 0 {
			return nil, fmt.Errorf("http: resolve %s: no addresses", name)
		}
		for _, g := range got {
			ips = append(ips, g.Unmap())
		}
	}
	for _, c := range ips {
		if err := a.permitPublic(name, c); err != nil {
			return nil, a.word(err)
		}
	}
	checked := map[netip.Addr]bool{}
	for _, c := range ips {
		checked[c.WithZone("")] = true
	}
	d := net.Dialer{
		Timeout: 30 * time.Second,
		// A second look at the very address connected to.
		Control: func(_, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil || !checked[ap.Addr().Unmap().WithZone("")] {
				return a.word(&Refusal{Reason: Unchecked, Address: address, List: a.text})
			}
			return nil
		},
	}
	var firstErr error
	for _, c := range ips {
		conn, err := d.DialContext(ctx, network, netip.AddrPortFrom(c, uint16(port)).String())
		if err == nil {
			return conn, nil
		}
		if firstErr == nil {
			firstErr = err
		}
		if ctx.Err() != nil {
			break
		}
	}
	return nil, firstErr
}

// dialVouched is DialContext under VouchedNames: it connects to addr only
// if the host is a listed name or the address connected to is in a listed
// range.
func (a *List) dialVouched(ctx context.Context, network, addr string) (net.Conn, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	d := net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	if !a.names[normalize(host)] {
		d.Control = func(_, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil || !a.allowsIP(ap.Addr()) {
				return a.word(&Refusal{Reason: NotListed, Host: host, Address: address, List: a.text})
			}
			return nil
		}
	}
	return d.DialContext(ctx, network, addr)
}
