// Package egress guards outbound connections to destinations that others
// choose (server-side request forgery): the URL of a job's http handler on
// the executor, the registered address of an XXL-JOB executor that the
// admin calls. One List, parsed from the operator's allow-list entries,
// decides which hosts and addresses may be reached, and its DialContext,
// put into an http.Transport (without a proxy), connects nowhere else: the
// check is made on the very address each connection goes to, so a DNS
// answer that changes between the check and the connection (rebinding), or
// an unusual spelling of an IP address, leads nowhere unchecked.
//
// # Two rules for names
//
// The two users of the package trust host names differently; Options.Names
// picks the rule, and each rule keeps the behaviour its user always had.
//
//   - PublicNames (the executor's http handler, --http-allow). Entries are
//     host names, "*.domain" (any subdomain, not the domain itself), IP
//     addresses, CIDRs and "*" (any host). A name entry, "*.domain" and "*"
//     reach public addresses only: every address the name resolves to must
//     be public. Loopback, private, link-local, unique-local, CGNAT,
//     multicast, unspecified, reserved, documentation and translated
//     (IPv4-compatible, NAT64, 6to4, Teredo) addresses (SpecialClass) are
//     reached only when their IP or CIDR is listed. The dialer resolves the
//     name itself (Options.Resolve), checks every address, and connects
//     only to a checked one, never resolving again. An empty list refuses
//     everything. A CIDR written in IPv4-mapped form (::ffff:10.0.0.0/104)
//     is read as its IPv4 range; a zoned IPv6 entry and an entry that ends
//     in a number without being a dotted quad are errors.
//   - VouchedNames (the admin's XXL-JOB client, --xxljob-allowed-hosts).
//     Entries are CIDRs, IP addresses and host names; no wildcards. A listed
//     name reaches whatever it resolves to (the operator vouches for the
//     name); any other name reaches only the addresses in listed ranges, and
//     an address only when it is in a listed range, special or not. The
//     dialer lets the system resolve and checks each address it connects to
//     (net.Dialer.Control). An empty list means Options.Default. A CIDR in
//     IPv4-mapped form is an error (write IPv4 ranges in IPv4).
//
// # Errors
//
// The package's errors are typed, so that each user words them as its
// operators know them (the flag to change, its own sentinel error):
// *EntryError for an entry that cannot be parsed, *Refusal for a
// destination the list does not allow (it wraps ErrNotAllowed), *HostError
// for a host that ends in a number or has a colon but is no valid address.
// Options.Wording turns each of them into the user's error; without it they
// are returned as they are. The dialer's other errors (a bad port, a name
// that does not resolve) are returned as they are.
//
// # Addresses
//
// LiteralIP reads a host as resolvers do (127.1, 0x7f000001, 2130706433,
// 0177.0.0.1, [::ffff:127.0.0.1]), so that every spelling of an address is
// checked as the address it denotes; SpecialClass names the kind of an
// address that is not public.
package egress
