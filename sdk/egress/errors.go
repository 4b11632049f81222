// This file: the package's typed errors, which each user words its own way
// (Options.Wording).

package egress

import (
	"errors"
	"fmt"
)

// ErrNotAllowed is wrapped by every *Refusal.
var ErrNotAllowed = errors.New("destination not on the allow-list")

// Problem is what is wrong with an allow-list entry (*EntryError) or a host
// (*HostError).
type Problem int

// The problems of entries and hosts.
const (
	// NotAHost: an entry that is none of the forms of its rule (a scheme,
	// a port, a path, a character no host name has).
	NotAHost Problem = iota
	// BadWildcard: "*." followed by no valid domain (PublicNames).
	BadWildcard
	// BadCIDR: an entry with a "/" that is no CIDR; EntryError.Err says why.
	BadCIDR
	// MappedCIDR: a CIDR in IPv4-mapped IPv6 form (VouchedNames).
	MappedCIDR
	// ZonedIP: an IPv6 address with a zone ("fe80::1%eth0").
	ZonedIP
	// NumericName: a host or entry whose last label is a number but that
	// is no valid IPv4 address (an entry: one not written as a dotted quad).
	NumericName
	// BadIPv6: a host with a colon that is no valid IPv6 address.
	BadIPv6
)

var problemText = map[Problem]string{
	NotAHost:    "want a host name, an IP address or a CIDR, without scheme, port or path",
	BadWildcard: "want *.domain, e.g. *.example.com",
	BadCIDR:     "not a CIDR (e.g. 10.20.0.0/16, fd00::/8)",
	MappedCIDR:  "write IPv4 ranges in IPv4 (e.g. 10.20.0.0/16)",
	ZonedIP:     "IPv6 zones are not supported",
	NumericName: "ends in a number but is not a valid IPv4 address",
	BadIPv6:     "not a valid IPv6 address",
}

// EntryError is an allow-list entry that cannot be parsed.
type EntryError struct {
	Entry   string // as given
	Problem Problem
	Err     error // BadCIDR: the parser's error
}

func (e *EntryError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("allow-list entry %q: %s: %v", e.Entry, problemText[e.Problem], e.Err)
	}
	return fmt.Sprintf("allow-list entry %q: %s", e.Entry, problemText[e.Problem])
}

// HostError is a host that looks like an address (a colon, a numeric last
// label) but is none, or an IPv6 address with a zone (LiteralIP).
type HostError struct {
	Host    string // as given
	Problem Problem
}

func (e *HostError) Error() string { return fmt.Sprintf("host %q: %s", e.Host, problemText[e.Problem]) }

// Reason is why a destination is refused.
type Reason int

// The reasons of a *Refusal.
const (
	// NotListed: neither the name nor the address is on the list.
	NotListed Reason = iota
	// NotPublic: a special address (Refusal.Class) whose IP or CIDR is not
	// listed (PublicNames).
	NotPublic
	// EmptyList: the list has no entry (PublicNames).
	EmptyList
	// Zoned: an IPv6 address with a zone (PublicNames).
	Zoned
	// Unchecked: the dialer was led to an address no check saw
	// (PublicNames).
	Unchecked
	// NotAName: a registered host that is neither an address nor a host
	// name (CheckHost, VouchedNames).
	NotAName
)

// Refusal is a destination the list does not allow. It wraps ErrNotAllowed.
type Refusal struct {
	Reason  Reason
	Host    string // the host name gone through, or the host as given ("" for an address in the URL)
	Address string // the address: an IP, or IP:port when the dialer refused the connection ("" when not known)
	Class   string // NotPublic: the kind of address (SpecialClass)
	List    string // the list's entries as given, comma separated
}

// Dest is the destination as the messages show it: "host (address)", or
// whichever of the two is known.
func (r *Refusal) Dest() string {
	switch {
	case r.Host == "":
		return r.Address
	case r.Address == "":
		return r.Host
	}
	return r.Host + " (" + r.Address + ")"
}

func (r *Refusal) Error() string {
	switch r.Reason {
	case NotPublic:
		return fmt.Sprintf("%v: %s is a %s address: list its IP or CIDR to reach it", ErrNotAllowed, r.Dest(), r.Class)
	case EmptyList:
		return fmt.Sprintf("%v: %s: the allow-list is empty", ErrNotAllowed, r.Dest())
	case Zoned:
		return fmt.Sprintf("%v: %s: addresses with an IPv6 zone are not allowed", ErrNotAllowed, r.Dest())
	case Unchecked:
		return fmt.Sprintf("%v: connection to %s was not checked against the allow-list", ErrNotAllowed, r.Dest())
	case NotAName:
		return fmt.Sprintf("%v: %q is neither an IP address nor a host name", ErrNotAllowed, r.Host)
	}
	return fmt.Sprintf("%v: %s is outside %s", ErrNotAllowed, r.Dest(), r.List)
}

// Unwrap returns ErrNotAllowed.
func (r *Refusal) Unwrap() error { return ErrNotAllowed }
