// Package ldapauth signs people in against an LDAP server or Active
// Directory (sso.LDAPConfig), and asks it again about them later.
//
// A Directory is made once by New from the configuration (it reads the CA
// file; it does not connect) and is safe for concurrent use. Each call
// opens one connection and closes it before returning: sign-ins and
// rechecks are rare enough that a pool would only add state (and stale
// connections after a server restart).
//
// # SignIn
//
//  1. Refuse an empty user name or password before connecting. An empty
//     password would make the user's bind an "unauthenticated bind"
//     (RFC 4513 5.1.2), which many servers answer with success.
//  2. Connect: ldap:// (then StartTLS first when configured) or ldaps://.
//     TLS checks the server's certificate against the system's CAs and
//     those of CAFile, and its name against the URL's host.
//  3. Bind as the service account (BindDN), or stay anonymous.
//  4. Search UserBase (subtree) with UserFilter, {username} replaced by the
//     name typed with ldap.EscapeFilter: "*", "(" and ")" in a name match
//     themselves, never other entries. Exactly one entry must match; none
//     or several (an ambiguous filter) refuse the sign-in.
//  5. Read the groups (below).
//  6. Bind as the entry's DN with the password. Only when that succeeds is
//     the Identity returned: Source "ldap", Subject the entry's DN,
//     Username its UsernameAttribute, Email its EmailAttribute, Groups the
//     group DNs.
//
// Groups are the entries found under GroupBase with GroupFilter ({dn}: the
// user's DN, {username}: the UsernameAttribute value, both escaped) when
// GroupBase is set, otherwise the user entry's MemberOfAttribute values.
// Active Directory: memberOf lists direct groups only and not the primary
// group; for nested groups set group_base and group_filter
// "(member:1.2.840.113556.1.4.1941:={dn})".
//
// # Lookup
//
// Lookup is the periodic recheck of a signed-in person, by the Subject
// SignIn returned, with the service account: a base search on that DN,
// filtered with UserFilter where {username} is "*", then its groups. The
// person is gone (sso.ErrGone) when the DN is not under UserBase, the
// entry no longer exists, or it no longer matches the filter (an Active
// Directory filter that excludes disabled accounts makes a disabled
// account gone at its next recheck).
//
// # Errors
//
// Every error wraps one of the sso errors and says what happened, never the
// password:
//
//   - sso.ErrBadCredentials: empty name or password, no or several
//     entries, the user's bind refused (invalid credentials, inappropriate
//     authentication, insufficient access, constraint violation,
//     unwilling to perform: disabled or locked accounts on some servers),
//     or an entry without the UsernameAttribute.
//   - sso.ErrUnavailable: the server could not be asked: connection
//     refused, timeout, TLS error (the message names the certificate
//     problem and points at ca_file), the service account's bind refused
//     (a configuration error: the message says so), or any other result.
//   - sso.ErrGone: Lookup only, see above.
//
// # Timeouts
//
// LDAPConfig.Timeout bounds the dial, the TLS handshake and each operation
// separately (a sign-in makes about five); the context's deadline and
// cancellation bound all of them.
package ldapauth
