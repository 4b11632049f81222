// This file: the allow-list — its options, its parsing under each rule for
// names, and its decisions on a host or an address.

package egress

import (
	"context"
	"net"
	"net/netip"
	"strings"
)

// Names is the rule a List applies to host names (see the package doc).
type Names int

// The rules for names.
const (
	// PublicNames: listed names, "*.domain" and "*" reach public addresses
	// only; special addresses only by a listed IP or CIDR. The executor's
	// http handler.
	PublicNames Names = iota
	// VouchedNames: a listed name reaches whatever it resolves to; any
	// other host only the addresses in listed ranges. The admin's XXL-JOB
	// client.
	VouchedNames
)

// Options configures a List.
type Options struct {
	// Names is the rule for host names. Default PublicNames.
	Names Names

	// Default is the list used when no entry is given (nil: an empty list,
	// which under PublicNames refuses everything).
	Default []string

	// Resolve looks up the addresses of a host name for the PublicNames
	// dialer. Default: net.DefaultResolver.LookupNetIP(ctx, "ip", host).
	// Tests replace it to make a name resolve to a private address without
	// DNS.
	Resolve func(ctx context.Context, host string) ([]netip.Addr, error)

	// Wording turns an error of the List (*EntryError, *Refusal,
	// *HostError) into the user's own (its text, its sentinel error). It
	// is given only errors of those types. nil: they are returned as they
	// are.
	Wording func(error) error
}

// List is a parsed allow-list. It is safe for concurrent use.
type List struct {
	opts      Options
	anyPublic bool            // "*" (PublicNames)
	names     map[string]bool // listed host names, normalized
	suffixes  []string        // ".example.com" of "*.example.com" (PublicNames)
	prefixes  []netip.Prefix
	text      string // the entries as given, comma separated, for messages
}

// Parse parses the entries (blank ones are skipped; none means
// o.Default) under o.Names.
func Parse(entries []string, o Options) (*List, error) {
	if o.Resolve == nil {
		o.Resolve = func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		}
	}
	a := &List{opts: o, names: map[string]bool{}}
	var shown []string
	for _, raw := range entries {
		e := normalize(strings.TrimSpace(raw))
		if e == "" {
			continue
		}
		shown = append(shown, e)
		add := a.addPublic
		if o.Names == VouchedNames {
			add = a.addVouched
		}
		if bad := add(e); bad != nil {
			bad.Entry = raw
			return nil, a.word(bad)
		}
	}
	if len(shown) == 0 && len(o.Default) > 0 {
		defaults := o.Default
		o.Default = nil
		return Parse(defaults, o)
	}
	a.text = strings.Join(shown, ",")
	return a, nil
}

// addPublic adds the normalized entry e under PublicNames, or returns its
// problem (its Entry left to the caller).
func (a *List) addPublic(e string) *EntryError {
	switch {
	case strings.Contains(e, "://"):
		return &EntryError{Problem: NotAHost}
	case e == "*":
		a.anyPublic = true
	case strings.HasPrefix(e, "*."):
		if !validHostName(e[2:]) {
			return &EntryError{Problem: BadWildcard}
		}
		a.suffixes = append(a.suffixes, e[1:])
	case strings.Contains(e, "/"):
		p, err := netip.ParsePrefix(e)
		if err != nil {
			return &EntryError{Problem: BadCIDR, Err: err}
		}
		if p.Addr().Is4In6() && p.Bits() >= 96 {
			p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
		}
		a.prefixes = append(a.prefixes, p.Masked())
	default:
		if ip, err := netip.ParseAddr(strings.Trim(e, "[]")); err == nil {
			if ip.Zone() != "" {
				return &EntryError{Problem: ZonedIP}
			}
			a.addAddr(ip)
			return nil
		}
		if looksNumeric(e) {
			return &EntryError{Problem: NumericName}
		}
		if !validHostName(e) {
			return &EntryError{Problem: NotAHost}
		}
		a.names[e] = true
	}
	return nil
}

// addVouched adds the normalized entry e under VouchedNames, or returns its
// problem (its Entry left to the caller).
func (a *List) addVouched(e string) *EntryError {
	if strings.Contains(e, "/") && !strings.Contains(e, "://") {
		p, err := netip.ParsePrefix(e)
		switch {
		case err != nil:
			return &EntryError{Problem: BadCIDR, Err: err}
		case p.Addr().Is4In6():
			return &EntryError{Problem: MappedCIDR}
		}
		a.prefixes = append(a.prefixes, p.Masked())
		return nil
	}
	if ip, err := netip.ParseAddr(strings.Trim(e, "[]")); err == nil && ip.Zone() == "" {
		a.addAddr(ip)
		return nil
	}
	if !plainName(e) {
		return &EntryError{Problem: NotAHost}
	}
	a.names[e] = true
	return nil
}

// addAddr lists one address (unmapped) as a range of its own.
func (a *List) addAddr(ip netip.Addr) {
	ip = ip.Unmap()
	a.prefixes = append(a.prefixes, netip.PrefixFrom(ip, ip.BitLen()))
}

// String lists the entries, as given (normalized), comma separated.
func (a *List) String() string { return a.text }

// word turns an error of the package into the user's (Options.Wording).
func (a *List) word(err error) error {
	if err == nil || a.opts.Wording == nil {
		return err
	}
	return a.opts.Wording(err)
}

func (a *List) hostAllowed(name string) bool {
	if name == "" {
		return false
	}
	if a.names[name] {
		return true
	}
	for _, s := range a.suffixes {
		if strings.HasSuffix(name, s) {
			return true
		}
	}
	return false
}

func (a *List) allowsIP(ip netip.Addr) bool {
	ip = ip.Unmap().WithZone("")
	for _, p := range a.prefixes {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// Permit decides whether a connection to ip, reached through the host name
// name ("" for an address written in the URL), is allowed. name must be
// normalized (lower case, no trailing dot).
func (a *List) Permit(name string, ip netip.Addr) error {
	if a.opts.Names == VouchedNames {
		if a.names[name] || a.allowsIP(ip) {
			return nil
		}
		return a.word(&Refusal{Reason: NotListed, Host: name, Address: ip.String(), List: a.text})
	}
	return a.word(a.permitPublic(name, ip))
}

// permitPublic is Permit under PublicNames.
func (a *List) permitPublic(name string, ip netip.Addr) error {
	refusal := &Refusal{Host: name, Address: ip.String(), List: a.text}
	if ip.Zone() != "" {
		refusal.Reason = Zoned
		return refusal
	}
	ip = ip.Unmap()
	for _, p := range a.prefixes {
		if p.Contains(ip) {
			return nil
		}
	}
	if class := SpecialClass(ip); class != "" {
		refusal.Reason, refusal.Class = NotPublic, class
		return refusal
	}
	if a.anyPublic || a.hostAllowed(name) {
		return nil
	}
	if a.text == "" {
		refusal.Reason = EmptyList
		return refusal
	}
	refusal.Reason = NotListed
	return refusal
}

// CheckHost is the check of a host before anything connects to it (a
// registered address): under VouchedNames a listed name, or an IP address
// in a listed range; under PublicNames an address as Permit decides. Other
// names pass: they are checked when dialled, on the addresses they
// resolve to.
func (a *List) CheckHost(host string) error {
	if a.opts.Names == PublicNames {
		ip, literal, err := LiteralIP(host)
		if err != nil || !literal {
			return a.word(err)
		}
		return a.Permit("", ip)
	}
	h := normalize(host)
	if a.names[h] {
		return nil
	}
	ip, err := netip.ParseAddr(h)
	if err != nil {
		if !plainName(h) {
			return a.word(&Refusal{Reason: NotAName, Host: host, List: a.text})
		}
		return nil // checked on connection
	}
	if ip.Zone() != "" || !a.allowsIP(ip) {
		return a.word(&Refusal{Reason: NotListed, Host: host, List: a.text})
	}
	return nil
}
