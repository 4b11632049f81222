package main

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// user is one entry of the -users file.
type user struct {
	Username string   `json:"username"`
	Password string   `json:"password"`
	Subject  string   `json:"subject"`
	Email    string   `json:"email"`
	Groups   []string `json:"groups"`
	Disabled bool     `json:"disabled"`
}

// clientConfig is the one registered client.
type clientConfig struct {
	id              string
	secret          string
	redirectURIs    []string
	postLogoutURIs  []string
	idTokenLifetime time.Duration
}

// key is an RSA signing key and its kid.
type key struct {
	id   string
	priv *rsa.PrivateKey
}

func newKey(prefix string) (key, error) {
	priv, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return key{}, err
	}
	return key{id: prefix + "-" + rand.Text()[:10], priv: priv}, nil
}

// signingKey is a key as op.SigningKey; publicKey as op.Key.
type signingKey struct{ k key }

func (s signingKey) SignatureAlgorithm() jose.SignatureAlgorithm { return jose.RS256 }
func (s signingKey) Key() any                                    { return s.k.priv }
func (s signingKey) ID() string                                  { return s.k.id }

type publicKey struct{ k key }

func (p publicKey) ID() string                         { return p.k.id }
func (p publicKey) Algorithm() jose.SignatureAlgorithm { return jose.RS256 }
func (p publicKey) Use() string                        { return "sig" }
func (p publicKey) Key() any                           { return &p.k.priv.PublicKey }

// authRequest is an authorization in progress, from /authorize to the code
// exchange.
type authRequest struct {
	id       string
	req      oidc.AuthRequest
	subject  string // set at sign-in
	authTime time.Time
	done     bool
	nonce    string // what the ID token will say (a misbehaviour may change it)
}

func (a *authRequest) GetID() string         { return a.id }
func (a *authRequest) GetACR() string        { return "" }
func (a *authRequest) GetAMR() []string      { return []string{"pwd"} }
func (a *authRequest) GetAudience() []string { return []string{a.req.ClientID} }
func (a *authRequest) GetAuthTime() time.Time {
	return a.authTime
}
func (a *authRequest) GetClientID() string { return a.req.ClientID }
func (a *authRequest) GetCodeChallenge() *oidc.CodeChallenge {
	return &oidc.CodeChallenge{Challenge: a.req.CodeChallenge, Method: a.req.CodeChallengeMethod}
}
func (a *authRequest) GetNonce() string                   { return a.nonce }
func (a *authRequest) GetRedirectURI() string             { return a.req.RedirectURI }
func (a *authRequest) GetResponseType() oidc.ResponseType { return a.req.ResponseType }
func (a *authRequest) GetResponseMode() oidc.ResponseMode { return a.req.ResponseMode }
func (a *authRequest) GetScopes() []string                { return a.req.Scopes }
func (a *authRequest) GetState() string                   { return a.req.State }
func (a *authRequest) GetSubject() string                 { return a.subject }
func (a *authRequest) Done() bool                         { return a.done }

// refreshToken is what a refresh token stands for.
type refreshToken struct {
	subject  string
	clientID string
	scopes   []string
	authTime time.Time
}

// refreshRequest is a refresh token being used (op.RefreshTokenRequest).
type refreshRequest struct {
	rt     refreshToken
	scopes []string
}

func (r *refreshRequest) GetAMR() []string            { return []string{"pwd"} }
func (r *refreshRequest) GetAudience() []string       { return []string{r.rt.clientID} }
func (r *refreshRequest) GetAuthTime() time.Time      { return r.rt.authTime }
func (r *refreshRequest) GetClientID() string         { return r.rt.clientID }
func (r *refreshRequest) GetScopes() []string         { return r.scopes }
func (r *refreshRequest) GetSubject() string          { return r.rt.subject }
func (r *refreshRequest) SetCurrentScopes(s []string) { r.scopes = s }

type accessToken struct {
	subject string
	expiry  time.Time
}

const accessTokenLifetime = 5 * time.Minute

// storage is the provider's state, in memory: op.Storage plus what the
// control API changes. One mutex guards all of it.
type storage struct {
	client clientConfig
	rogue  key // signs the ID tokens that must not verify

	mu           sync.Mutex
	users        map[string]*user // by username
	keys         []key            // keys[0] signs; the others are still published
	authRequests map[string]*authRequest
	codes        map[string]string // code -> auth request id
	refresh      map[string]refreshToken
	access       map[string]accessToken
	next         misbehaviour // for the next token request
	logouts      int
}

var _ op.Storage = (*storage)(nil)

func newStorage(users []user, c clientConfig) (*storage, error) {
	s := &storage{
		client:       c,
		users:        map[string]*user{},
		authRequests: map[string]*authRequest{},
		codes:        map[string]string{},
		refresh:      map[string]refreshToken{},
		access:       map[string]accessToken{},
	}
	for i := range users {
		u := users[i]
		if u.Username == "" || u.Subject == "" {
			return nil, fmt.Errorf("user %d: username and subject are required", i+1)
		}
		if _, dup := s.users[u.Username]; dup {
			return nil, fmt.Errorf("user %q is listed twice", u.Username)
		}
		s.users[u.Username] = &u
	}
	k, err := newKey("key")
	if err != nil {
		return nil, err
	}
	s.keys = []key{k}
	if s.rogue, err = newKey("rogue"); err != nil {
		return nil, err
	}
	return s, nil
}

// userBySubject; the caller holds mu.
func (s *storage) userBySubject(sub string) *user {
	for _, u := range s.users {
		if u.Subject == sub {
			return u
		}
	}
	return nil
}

// CreateAuthRequest keeps an authorization request; PKCE with S256 is
// required.
func (s *storage) CreateAuthRequest(_ context.Context, req *oidc.AuthRequest, _ string) (op.AuthRequest, error) {
	if req.CodeChallenge == "" || req.CodeChallengeMethod != oidc.CodeChallengeMethodS256 {
		return nil, oidc.ErrInvalidRequest().WithDescription("this provider requires PKCE with code_challenge_method S256")
	}
	a := &authRequest{id: rand.Text(), req: *req, nonce: req.Nonce}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.authRequests[a.id] = a
	return a, nil
}

func (s *storage) AuthRequestByID(_ context.Context, id string) (op.AuthRequest, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.authRequests[id]
	if !ok {
		return nil, fmt.Errorf("no authorization request %q", id)
	}
	return a, nil
}

// AuthRequestByCode returns the request of code; for a wrong-nonce
// misbehaviour, a copy whose ID token will carry another nonce.
func (s *storage) AuthRequestByCode(ctx context.Context, code string) (op.AuthRequest, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.authRequests[s.codes[code]]
	if !ok {
		return nil, errors.New("unknown or used code")
	}
	if misbehaviourFrom(ctx).Kind == badNonce {
		c := *a
		c.nonce = "not-" + a.nonce
		return &c, nil
	}
	return a, nil
}

// login marks the request signed in by username, or says why not.
func (s *storage) login(id, username, password string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.authRequests[id]
	if !ok {
		return errors.New("this sign-in request is unknown or was used; start again from the application")
	}
	u, ok := s.users[username]
	if !ok || u.Password != password {
		return errors.New("wrong user name or password")
	}
	if u.Disabled {
		return errors.New("this account is disabled")
	}
	a.subject, a.authTime, a.done = u.Subject, time.Now(), true
	return nil
}

func (s *storage) SaveAuthCode(_ context.Context, id, code string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.codes[code] = id
	return nil
}

func (s *storage) DeleteAuthRequest(_ context.Context, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.authRequests, id)
	for c, rid := range s.codes {
		if rid == id {
			delete(s.codes, c)
		}
	}
	return nil
}

func (s *storage) CreateAccessToken(_ context.Context, req op.TokenRequest) (string, time.Time, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.newAccessToken(req.GetSubject())
}

// newAccessToken; the caller holds mu.
func (s *storage) newAccessToken(sub string) (string, time.Time, error) {
	id := rand.Text()
	exp := time.Now().Add(accessTokenLifetime)
	s.access[id] = accessToken{subject: sub, expiry: exp}
	return id, exp, nil
}

// CreateAccessAndRefreshTokens issues an access token and a new refresh
// token; the refresh token used (if any) is spent.
func (s *storage) CreateAccessAndRefreshTokens(_ context.Context, req op.TokenRequest, current string) (string, string, time.Time, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var rt refreshToken
	switch r := req.(type) {
	case *authRequest:
		rt = refreshToken{subject: r.subject, clientID: r.req.ClientID, scopes: r.req.Scopes, authTime: r.authTime}
	case *refreshRequest:
		if _, ok := s.refresh[current]; !ok {
			return "", "", time.Time{}, oidc.ErrInvalidGrant().WithDescription("refresh token already used")
		}
		delete(s.refresh, current)
		rt = r.rt
		rt.scopes = r.scopes
	default:
		return "", "", time.Time{}, fmt.Errorf("unexpected token request %T", req)
	}
	id, exp, err := s.newAccessToken(rt.subject)
	if err != nil {
		return "", "", time.Time{}, err
	}
	token := "rt-" + rand.Text() + rand.Text()
	s.refresh[token] = rt
	return id, token, exp, nil
}

// TokenRequestByRefreshToken refuses the refresh tokens of disabled or
// removed users (op turns the error into invalid_grant).
func (s *storage) TokenRequestByRefreshToken(_ context.Context, token string) (op.RefreshTokenRequest, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rt, ok := s.refresh[token]
	if !ok {
		return nil, errors.New("unknown refresh token")
	}
	u := s.userBySubject(rt.subject)
	if u == nil || u.Disabled {
		delete(s.refresh, token)
		return nil, fmt.Errorf("user %s is disabled", rt.subject)
	}
	return &refreshRequest{rt: rt, scopes: rt.scopes}, nil
}

// TerminateSession is RP-initiated logout: the user's refresh tokens of
// that client end.
func (s *storage) TerminateSession(_ context.Context, userID, clientID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.logouts++
	for t, rt := range s.refresh {
		if rt.subject == userID && rt.clientID == clientID {
			delete(s.refresh, t)
		}
	}
	return nil
}

func (s *storage) RevokeToken(_ context.Context, token, _, _ string) *oidc.Error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.refresh, token)
	delete(s.access, token)
	return nil
}

func (s *storage) GetRefreshTokenInfo(_ context.Context, _, token string) (string, string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rt, ok := s.refresh[token]
	if !ok {
		return "", "", op.ErrInvalidRefreshToken
	}
	return rt.subject, token, nil
}

// SigningKey is the current key, or for the unknown-key and forged
// misbehaviours a key the JWKS does not hold (under its own kid, or under
// the current kid).
func (s *storage) SigningKey(ctx context.Context) (op.SigningKey, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch misbehaviourFrom(ctx).Kind {
	case badUnknownKey:
		return signingKey{s.rogue}, nil
	case badForged:
		return signingKey{key{id: s.keys[0].id, priv: s.rogue.priv}}, nil
	}
	return signingKey{s.keys[0]}, nil
}

// currentKey is the key that signs.
func (s *storage) currentKey() key {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.keys[0]
}

func (s *storage) SignatureAlgorithms(context.Context) ([]jose.SignatureAlgorithm, error) {
	return []jose.SignatureAlgorithm{jose.RS256}, nil
}

func (s *storage) KeySet(context.Context) ([]op.Key, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]op.Key, 0, len(s.keys))
	for _, k := range s.keys {
		out = append(out, publicKey{k})
	}
	return out, nil
}

// rotate makes a new key the signing one; the old ones stay published
// unless drop.
func (s *storage) rotate(drop bool) (string, error) {
	k, err := newKey("key")
	if err != nil {
		return "", err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if drop {
		s.keys = []key{k}
	} else {
		s.keys = append([]key{k}, s.keys...)
	}
	return k.id, nil
}

func (s *storage) GetClientByClientID(ctx context.Context, id string) (op.Client, error) {
	if id != s.client.id {
		return nil, fmt.Errorf("no client %q", id)
	}
	return &client{cfg: s.client, bad: misbehaviourFrom(ctx)}, nil
}

func (s *storage) AuthorizeClientIDSecret(_ context.Context, id, secret string) error {
	if id != s.client.id || secret != s.client.secret {
		return errors.New("wrong client id or secret")
	}
	return nil
}

func (s *storage) SetUserinfoFromScopes(context.Context, *oidc.UserInfo, string, string, []string) error {
	return nil // deprecated by op: SetUserinfoFromRequest does the work
}

// SetUserinfoFromRequest fills the ID token's claims from the user as they
// are now: a refresh shows the current groups.
func (s *storage) SetUserinfoFromRequest(_ context.Context, info *oidc.UserInfo, req op.IDTokenRequest, _ []string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fill(info, req.GetSubject())
}

// fill; the caller holds mu.
func (s *storage) fill(info *oidc.UserInfo, sub string) error {
	u := s.userBySubject(sub)
	if u == nil {
		return fmt.Errorf("no user %q", sub)
	}
	info.Subject = u.Subject
	info.PreferredUsername = u.Username
	if u.Email != "" {
		info.Email = u.Email
		info.EmailVerified = true
	}
	info.AppendClaims("groups", slices.Clone(u.Groups))
	return nil
}

func (s *storage) SetUserinfoFromToken(_ context.Context, info *oidc.UserInfo, tokenID, _, _ string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	at, ok := s.access[tokenID]
	if !ok || time.Now().After(at.expiry) {
		return errors.New("access token unknown or expired")
	}
	return s.fill(info, at.subject)
}

func (s *storage) SetIntrospectionFromToken(_ context.Context, resp *oidc.IntrospectionResponse, tokenID, _, _ string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	at, ok := s.access[tokenID]
	if !ok || time.Now().After(at.expiry) {
		return nil // inactive
	}
	resp.Active = true
	resp.Subject = at.subject
	return nil
}

func (s *storage) GetPrivateClaimsFromScopes(context.Context, string, string, []string) (map[string]any, error) {
	return nil, nil
}

func (s *storage) GetKeyByIDAndClientID(context.Context, string, string) (*jose.JSONWebKey, error) {
	return nil, errors.New("JWT profile is not supported")
}

func (s *storage) ValidateJWTProfileScopes(_ context.Context, _ string, scopes []string) ([]string, error) {
	return scopes, nil
}

func (s *storage) Health(context.Context) error { return nil }

// client is the registered client as op sees it during one request; bad
// shifts the clock of the ID token it gets.
type client struct {
	cfg clientConfig
	bad misbehaviour
}

func (c *client) GetID() string                       { return c.cfg.id }
func (c *client) RedirectURIs() []string              { return c.cfg.redirectURIs }
func (c *client) PostLogoutRedirectURIs() []string    { return c.cfg.postLogoutURIs }
func (c *client) ApplicationType() op.ApplicationType { return op.ApplicationTypeWeb }
func (c *client) AuthMethod() oidc.AuthMethod         { return oidc.AuthMethodBasic }
func (c *client) ResponseTypes() []oidc.ResponseType {
	return []oidc.ResponseType{oidc.ResponseTypeCode}
}
func (c *client) GrantTypes() []oidc.GrantType {
	return []oidc.GrantType{oidc.GrantTypeCode, oidc.GrantTypeRefreshToken}
}
func (c *client) LoginURL(id string) string           { return "/login?authRequestID=" + id }
func (c *client) AccessTokenType() op.AccessTokenType { return op.AccessTokenTypeBearer }
func (c *client) DevMode() bool                       { return false }
func (c *client) RestrictAdditionalIdTokenScopes() func([]string) []string {
	return func(s []string) []string { return s }
}
func (c *client) RestrictAdditionalAccessTokenScopes() func([]string) []string {
	return func(s []string) []string { return s }
}
func (c *client) IsScopeAllowed(scope string) bool     { return scope == "groups" }
func (c *client) IDTokenUserinfoClaimsAssertion() bool { return true }

// IDTokenLifetime and ClockSkew: op makes exp = now + skew + lifetime and
// iat = now - skew; a token made as if the provider's clock were off by d
// needs skew = -d and lifetime + 2d.
func (c *client) IDTokenLifetime() time.Duration { return c.cfg.idTokenLifetime + 2*c.bad.Shift }
func (c *client) ClockSkew() time.Duration       { return -c.bad.Shift }
