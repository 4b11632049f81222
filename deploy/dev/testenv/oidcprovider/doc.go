// Command oidcprovider is a small OpenID Connect provider for the tests of
// the admin's single sign-on (admin/sso/oidcauth). It is a test fixture,
// never shipped and never built into a release: testenv.StartOIDCProvider
// builds it once per test process and runs it as a real process on a
// loopback port, so that the relying party is tested over HTTP against a
// maintained OP library (github.com/zitadel/oidc/v3/pkg/op) instead of a
// mock.
//
// What it serves, all on one listener at -addr (127.0.0.1 only):
//
//   - discovery (/.well-known/openid-configuration), JWKS (/keys), the
//     authorization endpoint (/authorize), the token endpoint
//     (/oauth/token), userinfo, revocation and end_session (RP-initiated
//     logout), from zitadel's op package;
//   - /login: a plain HTML form (inputs with ids "username", "password",
//     "submit") where a person, a headless browser or an http.Client with a
//     cookie jar signs in; there is no SSO session, every authorization asks
//     again;
//   - /control/: the test's levers, loopback callers only (see control.go).
//
// Users come from the JSON file named by -users: a list of
// {"username", "password", "subject", "email", "groups"}. There is one
// confidential client (-client-id, -client-secret, -redirect-uri,
// -post-logout-redirect-uri) that must use PKCE with S256. ID tokens carry
// "groups", "preferred_username" and "email". Refresh tokens are issued
// when the client asks for offline_access and rotate at every use; a
// disabled user's refresh is refused with invalid_grant, and the groups
// in a refreshed ID token are the user's current ones.
//
// Once it listens it prints "oidcprovider: ready on <issuer>". SIGTERM or
// SIGINT shut it down.
package main
