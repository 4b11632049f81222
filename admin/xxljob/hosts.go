package xxljob

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"syscall"
	"time"
)

// DefaultAllowedHosts is the default of Config.AllowedHosts
// (--xxljob-allowed-hosts): loopback and the private networks (RFC 1918,
// IPv6 unique-local), where executors run. Public addresses, link-local
// ones (169.254.169.254, the cloud metadata service), CGNAT and the other
// special ranges are not on it.
var DefaultAllowedHosts = []string{"127.0.0.0/8", "::1/128", "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "fc00::/7"}

// ErrHostNotAllowed is wrapped by a refusal to register, or to call, an
// executor address whose host is not on the admin's allow-list.
var ErrHostNotAllowed = errors.New("host not on the admin's XXL-JOB allow-list (--xxljob-allowed-hosts)")

// AllowedHosts is where the admin may call XXL-JOB executors: a registry
// value is an address any holder of an app's token chooses, and the admin
// POSTs to it every probe with the app's token. Entries are CIDRs
// ("10.20.0.0/16"), IP addresses, and host names; a host name entry allows
// that name whatever it resolves to (the operator vouches for the name), any
// other name is allowed when the address it connects to is in a listed
// range. The check is made on the address each connection actually goes to
// (net.Dialer.Control), so DNS answers that change, and unusual spellings of
// an IP address, lead nowhere unchecked.
type AllowedHosts struct {
	prefixes []netip.Prefix
	names    map[string]bool
	text     string // for messages
}

// ParseAllowedHosts parses the entries; none means DefaultAllowedHosts.
func ParseAllowedHosts(entries []string) (*AllowedHosts, error) {
	a := &AllowedHosts{names: map[string]bool{}}
	var shown []string
	for _, raw := range entries {
		e := strings.TrimSuffix(strings.ToLower(strings.TrimSpace(raw)), ".")
		if e == "" {
			continue
		}
		shown = append(shown, e)
		if strings.Contains(e, "/") && !strings.Contains(e, "://") {
			p, err := netip.ParsePrefix(e)
			switch {
			case err != nil:
				return nil, fmt.Errorf("xxljob allowed hosts: %q is not a CIDR (e.g. 10.20.0.0/16, fd00::/8): %v", raw, err)
			case p.Addr().Is4In6():
				return nil, fmt.Errorf("xxljob allowed hosts: %q: write IPv4 ranges in IPv4 (e.g. 10.20.0.0/16)", raw)
			}
			a.prefixes = append(a.prefixes, p.Masked())
			continue
		}
		if ip, err := netip.ParseAddr(strings.Trim(e, "[]")); err == nil && ip.Zone() == "" {
			ip = ip.Unmap()
			a.prefixes = append(a.prefixes, netip.PrefixFrom(ip, ip.BitLen()))
			continue
		}
		if !hostName(e) {
			return nil, fmt.Errorf("xxljob allowed hosts: %q: want a CIDR (10.20.0.0/16), an IP address or a host name, without scheme, port or path", raw)
		}
		a.names[e] = true
	}
	if len(shown) == 0 {
		return ParseAllowedHosts(DefaultAllowedHosts)
	}
	a.text = strings.Join(shown, ",")
	return a, nil
}

// hostName reports whether h is a plausible DNS name (letters, digits, '-',
// '_' and dots; the last label not all digits, which would be an address).
func hostName(h string) bool {
	if h == "" || len(h) > 253 {
		return false
	}
	labels := strings.Split(h, ".")
	for _, l := range labels {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return false
		}
		for _, r := range l {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
				return false
			}
		}
	}
	last := labels[len(labels)-1]
	return strings.Trim(last, "0123456789") != "" && !strings.HasPrefix(last, "0x")
}

// String lists the entries, as given.
func (a *AllowedHosts) String() string { return a.text }

func (a *AllowedHosts) allowsIP(ip netip.Addr) bool {
	ip = ip.Unmap().WithZone("")
	for _, p := range a.prefixes {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// checkHost is the check of a registry value's host at registration: a
// listed name, or an IP address in a listed range. Other names are checked
// when the admin connects (the registration's beat), on the address they
// resolve to.
func (a *AllowedHosts) checkHost(host string) error {
	h := strings.TrimSuffix(strings.ToLower(host), ".")
	if a.names[h] {
		return nil
	}
	ip, err := netip.ParseAddr(h)
	if err != nil {
		if !hostName(h) {
			return fmt.Errorf("%w: %q is neither an IP address nor a host name", ErrHostNotAllowed, host)
		}
		return nil // checked on connection
	}
	if ip.Zone() != "" || !a.allowsIP(ip) {
		return fmt.Errorf("%w: %s is outside %s", ErrHostNotAllowed, host, a.text)
	}
	return nil
}

// dial connects to addr only if the host is a listed name or the address
// connected to is in a listed range.
func (a *AllowedHosts) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	d := net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	if !a.names[strings.TrimSuffix(strings.ToLower(host), ".")] {
		d.Control = func(_, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil || !a.allowsIP(ap.Addr()) {
				return fmt.Errorf("%w: %s (%s) is outside %s", ErrHostNotAllowed, host, address, a.text)
			}
			return nil
		}
	}
	return d.DialContext(ctx, network, addr)
}
