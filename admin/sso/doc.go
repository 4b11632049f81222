// Package sso signs people in with the company's identity: an OpenID
// Connect provider (subpackage oidcauth) or an LDAP / Active Directory
// server (subpackage ldapauth), and maps the groups the directory gives a
// person to a role and the apps they may act on.
//
// The parts, and who calls them:
//
//   - Identity is what a directory says about a person: its source
//     ("oidc" or "ldap"), the subject that stays the same when the person
//     is renamed (the OIDC "sub", the LDAP entry's DN), a user name and the
//     groups (OIDC claim values or LDAP group DNs).
//   - Mapping turns groups into a Grant (role and apps) with Resolve. It is
//     pure: no I/O, table-tested and fuzzed. A person none of whose groups
//     is mapped gets no grant and is refused.
//   - Config is the file given with --sso-config: the provider sections
//     and the mapping, checked by Load before the admin starts.
//
// The lifecycle (docs/security.md, Single sign-on): the first sign-in
// creates the user (source and subject kept), every sign-in applies the
// mapping again, and while a directory user's session or API key is used
// the admin asks the directory again at most every Config.Recheck. A person
// the directory no longer knows, or who lost every mapped group, is refused
// from that request on: their sessions end and their API keys stop working
// until a sign-in maps them again. Local users (password in the platform
// database) stay possible, as a break-glass admin.
package sso
