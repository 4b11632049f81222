// This file: what an address or a host is: the kind of a non-public address
// (SpecialClass), a host read as resolvers read it (LiteralIP), and which
// names are plausible host names.

package egress

import (
	"net/netip"
	"strconv"
	"strings"
)

// specialPrefixes are address blocks that are not public destinations,
// beyond what netip's predicates recognise.
var specialPrefixes = []struct {
	p     netip.Prefix
	class string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), "\"this network\" (0.0.0.0/8)"},
	{netip.MustParsePrefix("100.64.0.0/10"), "CGNAT (100.64.0.0/10)"},
	{netip.MustParsePrefix("192.0.0.0/24"), "IETF protocol (192.0.0.0/24)"},
	{netip.MustParsePrefix("192.0.2.0/24"), "documentation"},
	{netip.MustParsePrefix("198.51.100.0/24"), "documentation"},
	{netip.MustParsePrefix("203.0.113.0/24"), "documentation"},
	{netip.MustParsePrefix("198.18.0.0/15"), "benchmarking (198.18.0.0/15)"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved (240.0.0.0/4)"},
	{netip.MustParsePrefix("fc00::/7"), "unique-local (fc00::/7)"},
	{netip.MustParsePrefix("fec0::/10"), "site-local (fec0::/10)"},
	{netip.MustParsePrefix("::/96"), "IPv4-compatible IPv6 (::/96)"},
	{netip.MustParsePrefix("64:ff9b::/96"), "NAT64 (64:ff9b::/96)"},
	{netip.MustParsePrefix("64:ff9b:1::/48"), "NAT64 (64:ff9b:1::/48)"},
	{netip.MustParsePrefix("100::/64"), "discard (100::/64)"},
	{netip.MustParsePrefix("2001::/32"), "Teredo (2001::/32)"},
	{netip.MustParsePrefix("2001:db8::/32"), "documentation"},
	{netip.MustParsePrefix("2002::/16"), "6to4 (2002::/16)"},
}

// SpecialClass names the kind of a non-public address, or "" for a public
// one. ip must be unmapped.
func SpecialClass(ip netip.Addr) string {
	switch {
	case !ip.IsValid():
		return "invalid"
	case ip.IsUnspecified():
		return "unspecified"
	case ip.IsLoopback():
		return "loopback"
	case ip.IsMulticast():
		return "multicast"
	case ip.IsLinkLocalUnicast(), ip.IsLinkLocalMulticast():
		return "link-local"
	}
	for _, s := range specialPrefixes {
		if s.p.Contains(ip) {
			return s.class
		}
	}
	switch {
	case ip.IsPrivate():
		return "private"
	case !ip.IsGlobalUnicast():
		return "non-unicast"
	}
	return ""
}

// LiteralIP reports whether host (no brackets, no port) is an IP address,
// in any of the forms resolvers accept: dotted quad, IPv6 (zone refused),
// and the legacy IPv4 forms of inet_aton — fewer parts ("127.1"), octal
// ("0177.0.0.1"), hex ("0x7f000001") and one decimal ("2130706433"). A
// host whose last label is numeric but that is no valid address is an
// error (*HostError), as in the WHATWG URL standard.
func LiteralIP(host string) (netip.Addr, bool, error) {
	h := strings.TrimSuffix(host, ".")
	if strings.Contains(h, ":") {
		ip, err := netip.ParseAddr(h)
		if err != nil {
			return netip.Addr{}, false, &HostError{Host: host, Problem: BadIPv6}
		}
		if ip.Zone() != "" {
			return netip.Addr{}, false, &HostError{Host: host, Problem: ZonedIP}
		}
		return ip.Unmap(), true, nil
	}
	if ip, err := netip.ParseAddr(h); err == nil {
		return ip, true, nil
	}
	if !looksNumeric(h) {
		return netip.Addr{}, false, nil
	}
	ip, ok := parseLegacyIPv4(h)
	if !ok {
		return netip.Addr{}, false, &HostError{Host: host, Problem: NumericName}
	}
	return ip, true, nil
}

// looksNumeric reports whether the last dot-separated label of h is a
// number (decimal, or hex with 0x): such a host is meant as an address.
func looksNumeric(h string) bool {
	h = strings.TrimSuffix(h, ".")
	last := h[strings.LastIndexByte(h, '.')+1:]
	if last == "" {
		return false
	}
	if len(last) > 1 && (last[:2] == "0x" || last[:2] == "0X") {
		for _, c := range last[2:] {
			if !isHex(c) {
				return false
			}
		}
		return true
	}
	for _, c := range last {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func isHex(c rune) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

// parseLegacyIPv4 parses the inet_aton forms: 1 to 4 parts, each decimal,
// octal (leading 0) or hex (0x); all parts but the last are one byte, the
// last fills the remaining bytes.
func parseLegacyIPv4(s string) (netip.Addr, bool) {
	parts := strings.Split(s, ".")
	if len(parts) == 0 || len(parts) > 4 {
		return netip.Addr{}, false
	}
	var vals []uint64
	for _, p := range parts {
		v, ok := parseLegacyPart(p)
		if !ok {
			return netip.Addr{}, false
		}
		vals = append(vals, v)
	}
	var n uint64
	for i, v := range vals[:len(vals)-1] {
		if v > 255 {
			return netip.Addr{}, false
		}
		n |= v << (8 * (3 - i))
	}
	last := vals[len(vals)-1]
	if last >= 1<<(8*(5-len(vals))) {
		return netip.Addr{}, false
	}
	n |= last
	return netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}), true
}

func parseLegacyPart(p string) (uint64, bool) {
	base := 10
	switch {
	case p == "":
		return 0, false
	case len(p) > 1 && (p[:2] == "0x" || p[:2] == "0X"):
		base, p = 16, p[2:]
		if p == "" {
			return 0, true // "0x" is 0, as inet_aton reads it
		}
	case len(p) > 1 && p[0] == '0':
		base, p = 8, p[1:]
	}
	if len(p) > 32 {
		return 0, false
	}
	v, err := strconv.ParseUint(p, base, 64)
	if err != nil || v > 0xffffffff {
		return 0, false
	}
	return v, true
}

func validHostName(h string) bool {
	if h == "" || len(h) > 253 {
		return false
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, r := range label {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
				return false
			}
		}
	}
	return true
}

// plainName reports whether h is a plausible DNS name (letters, digits, '-',
// '_' and dots; the last label not all digits, which would be an address).
func plainName(h string) bool {
	if !validHostName(h) {
		return false
	}
	last := h[strings.LastIndexByte(h, '.')+1:]
	return strings.Trim(last, "0123456789") != "" && !strings.HasPrefix(last, "0x")
}

// normalize lowers a host name and drops its trailing dot.
func normalize(h string) string { return strings.TrimSuffix(strings.ToLower(h), ".") }
