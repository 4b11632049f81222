package ops

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/auth"
	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/store"
)

// API keys: a user's personal credentials for scripts, CI and shardjobctl
// (formerly "API tokens"; "token" is the fencing token of an attempt).
//
// A key is APIKeyPrefix followed by APIKeyRandomLen lower-case base32
// characters (256 random bits), sent as "Authorization: Bearer sjt_…". It
// acts as its user, with the user's current role, lowered to the key's
// role cap when it has one. The secret is shown once, in the answer to its
// creation; the database keeps its SHA-256 (auth.HashToken): a fast hash is
// enough for a long random secret, there is nothing to guess. admin/api
// authenticates the requests made with a key.

// APIKeyPrefix starts every API key, so that the server (and secret
// scanners) can tell them from session tokens.
const APIKeyPrefix = "sjt_"

const (
	// APIKeyRandomLen is the number of base32 characters of 32 random
	// bytes, no padding, after APIKeyPrefix.
	APIKeyRandomLen  = 52
	apiKeyShownLen   = 8 // characters of the random part kept as the display prefix
	maxAPIKeyDays    = 3650
	maxAPIKeysListed = 1000
)

// ErrCredential is the kind of refusal of a request whose own API key is
// no longer valid (revoked, or its user deleted, while the request ran):
// admin/api answers 401 as to any request with a key refused.
var ErrCredential = errors.New("credential no longer valid")

var apiKeyEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// newAPIKey returns a new secret and its display prefix.
func newAPIKey() (secret, prefix string) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(fmt.Sprintf("crypto/rand failed: %v", err))
	}
	secret = APIKeyPrefix + apiKeyEncoding.EncodeToString(b)
	return secret, secret[:len(APIKeyPrefix)+apiKeyShownLen]
}

// WellFormedAPIKey checks the shape of a key before any database read.
func WellFormedAPIKey(s string) bool {
	rest, ok := strings.CutPrefix(s, APIKeyPrefix)
	if !ok || len(rest) != APIKeyRandomLen {
		return false
	}
	for _, r := range rest {
		if !(r >= 'a' && r <= 'z' || r >= '2' && r <= '7') {
			return false
		}
	}
	return true
}

func apiKeyObject(id int64) string { return "token/" + strconv.FormatInt(id, 10) }

func (s *Service) apiKeyView(k store.APIKey) apitypes.APIKeyView {
	at := func(ms int64, valid bool) *time.Time {
		if !valid {
			return nil
		}
		t := msTime(ms)
		return &t
	}
	v := apitypes.APIKeyView{
		ID: k.ID, User: k.Username, Name: k.Name, Prefix: k.Prefix, RoleCap: k.RoleCap, State: "active",
		CreatedAt: msTime(k.CreatedAt), LastUsedAt: at(k.LastUsedAt.Int64, k.LastUsedAt.Valid),
		ExpiresAt: at(k.ExpiresAt.Int64, k.ExpiresAt.Valid), RevokedAt: at(k.RevokedAt.Int64, k.RevokedAt.Valid),
	}
	if k.ParentID.Valid {
		id := k.ParentID.Int64
		v.ParentID = &id
	}
	switch {
	case k.RevokedAt.Valid:
		v.State = "revoked"
	case k.ExpiresAt.Valid && k.ExpiresAt.Int64 <= s.cfg.Clock.Now().UnixMilli():
		v.State = "expired"
	}
	return v
}

// APIKeys lists the actor's API keys, newest first; with all, every user's
// (admins only: ErrForbidden otherwise).
func (s *Service) APIKeys(ctx context.Context, a Actor, all bool) (apitypes.APIKeyList, error) {
	userID := a.User.ID
	if all {
		if !auth.Allows(a.User.Role, auth.RoleAdmin) {
			return apitypes.APIKeyList{}, refuse(ErrForbidden, "role "+a.User.Role+" may list only its own API keys; all=true needs admin", nil)
		}
		userID = 0
	}
	keys, err := s.st.APIKeys(ctx, userID, maxAPIKeysListed)
	if err != nil {
		return apitypes.APIKeyList{}, err
	}
	out := apitypes.APIKeyList{Keys: make([]apitypes.APIKeyView, 0, len(keys))}
	for _, k := range keys {
		out.Keys = append(out.Keys, s.apiKeyView(k))
	}
	return out, nil
}

func validAPIKeyName(s string) bool {
	if s == "" || len(s) > 64 || strings.TrimSpace(s) != s {
		return false
	}
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}

// CreateAPIKey creates an API key of the actor. A key never has more
// rights than its creator (ErrForbidden), and one created with a key
// (Actor.APIKeyID) never outlives it nor goes without a role cap; a user
// has at most store.MaxActiveAPIKeys usable keys (ErrConflict).
func (s *Service) CreateAPIKey(ctx context.Context, a Actor, req apitypes.APIKeyRequest) (apitypes.CreatedAPIKey, error) {
	u := a.User
	fields := map[string]msg.Msg{}
	if !validAPIKeyName(req.Name) {
		fields["name"] = msg.New(msg.APIKeyNameRule)
	}
	if req.Role != "" && !auth.ValidRole(req.Role) {
		fields["role"] = msg.New(msg.APIKeyRoleOneOf)
	}
	if d := req.ExpiresInDays; d != nil && (*d < 0 || *d > maxAPIKeyDays) {
		fields["expires_in_days"] = msg.New(msg.APIKeyDays, "max", maxAPIKeyDays)
	}
	if len(fields) > 0 {
		return apitypes.CreatedAPIKey{}, refuse(ErrInvalid, "invalid API key request", fields)
	}
	if req.Role != "" && !auth.Allows(u.Role, req.Role) {
		return apitypes.CreatedAPIKey{}, refuse(ErrForbidden, "an API key cannot have more rights than its creator: your role here is "+u.Role+", the key asks for "+req.Role, nil)
	}
	var parent store.APIKey
	if a.APIKeyID != 0 {
		p, err := s.st.APIKey(ctx, a.APIKeyID)
		if errors.Is(err, store.ErrNotFound) {
			return apitypes.CreatedAPIKey{}, keyGone(err)
		}
		if err != nil {
			return apitypes.CreatedAPIKey{}, err
		}
		parent = p
		if req.Role == "" {
			req.Role = u.Role // a capped key must not mint an uncapped one
		}
	}
	expires, err := s.childExpiry(parent, a.APIKeyID != 0, req.ExpiresInDays)
	if err != nil {
		return apitypes.CreatedAPIKey{}, err
	}
	n, err := s.st.CountActiveAPIKeys(ctx, u.ID)
	if err != nil {
		return apitypes.CreatedAPIKey{}, err
	}
	if n >= store.MaxActiveAPIKeys {
		return apitypes.CreatedAPIKey{}, refuse(ErrConflict, "you have "+strconv.Itoa(n)+" active API keys, the limit is "+strconv.Itoa(store.MaxActiveAPIKeys)+
			"; revoke unused ones first (DELETE /api/v1/api-keys/{id})", nil)
	}
	secret, prefix := newAPIKey()
	k, err := s.st.CreateAPIKey(ctx, store.NewAPIKey{
		UserID: u.ID, Name: req.Name, Prefix: prefix, Hash: auth.HashToken(secret), RoleCap: req.Role, ExpiresAt: expires,
		ParentID: a.APIKeyID,
	})
	if errors.Is(err, store.ErrAPIKeyRevoked) || errors.Is(err, store.ErrNotFound) {
		// The actor's key was revoked (or its user deleted) while this
		// request ran: it is refused as it would be now.
		return apitypes.CreatedAPIKey{}, keyGone(err)
	}
	if err != nil {
		return apitypes.CreatedAPIKey{}, err
	}
	v := s.apiKeyView(k)
	s.auditAccount(ctx, a, k.UserID, "token.create", apiKeyObject(k.ID), map[string]any{
		"name": k.Name, "prefix": k.Prefix, "user": k.Username, "role_cap": k.RoleCap, "expires_at": v.ExpiresAt, "parent_id": v.ParentID,
	})
	return apitypes.CreatedAPIKey{Key: v, Secret: secret,
		Note: "the secret is shown only now; store it safely and send it as 'Authorization: Bearer <secret>'"}, nil
}

// keyGone refuses a request whose own API key went away while it ran.
func keyGone(err error) error {
	return refuse(ErrCredential, "the API key of this request is no longer valid: "+err.Error()+"; create a new key (POST /api/v1/api-keys)", nil)
}

// childExpiry returns the expiry of a new key (zero: never) from the
// request's expires_in_days, capped by the key the request was
// authenticated with, if any (viaKey): a key never outlives the key that
// creates it. Without expires_in_days the new key expires with that key;
// asking for longer (0 is "never") is ErrInvalid with the limit. A key
// created from a console session is capped by nothing here.
func (s *Service) childExpiry(parent store.APIKey, viaKey bool, days *int) (time.Time, error) {
	now := s.cfg.Clock.Now()
	var want time.Time
	if days != nil && *days > 0 {
		want = now.Add(time.Duration(*days) * 24 * time.Hour)
	}
	if !viaKey || !parent.ExpiresAt.Valid {
		return want, nil
	}
	limit := time.UnixMilli(parent.ExpiresAt.Int64)
	if days == nil {
		return limit, nil
	}
	if !want.IsZero() && !want.After(limit) {
		return want, nil
	}
	most := int(limit.Sub(now) / (24 * time.Hour))
	hint := msg.New(msg.APIKeyOutliveMost, "days", most)
	if most < 1 {
		hint = msg.New(msg.APIKeyOutliveNone)
	}
	return time.Time{}, refuse(ErrInvalid, "an API key cannot outlive the API key that creates it: the API key of this request ("+parent.Prefix+"…, "+
		strconv.Quote(parent.Name)+") expires at "+limit.UTC().Format(time.RFC3339), map[string]msg.Msg{"expires_in_days": hint})
}

// RevokeAPIKey revokes one of the actor's API keys, and every key created
// with it; an admin may revoke anyone's. Another user's key does not exist
// for a non-admin (ErrNotFound). Revoking a revoked key changes nothing.
func (s *Service) RevokeAPIKey(ctx context.Context, a Actor, id int64) (apitypes.RevokedAPIKey, error) {
	k, err := s.st.APIKey(ctx, id)
	if err == nil && k.UserID != a.User.ID && !auth.Allows(a.User.Role, auth.RoleAdmin) {
		err = store.ErrNotFound // do not tell others' key ids apart from missing ones
	}
	if errors.Is(err, store.ErrNotFound) {
		return apitypes.RevokedAPIKey{}, &Error{Kind: ErrNotFound, Msg: "API key " + strconv.FormatInt(id, 10) + " does not exist or is not yours", Object: "API key", ID: id}
	}
	if err != nil {
		return apitypes.RevokedAPIKey{}, err
	}
	revoked, descendants, err := s.st.RevokeAPIKey(ctx, id)
	if err != nil {
		return apitypes.RevokedAPIKey{}, err
	}
	if descendants == nil {
		descendants = []int64{}
	}
	if revoked || len(descendants) > 0 {
		s.auditAccount(ctx, a, k.UserID, "token.revoke", apiKeyObject(id), map[string]any{
			"name": k.Name, "prefix": k.Prefix, "user": k.Username, "also_revoked": descendants})
	}
	if k, err = s.st.APIKey(ctx, id); err != nil {
		return apitypes.RevokedAPIKey{}, err
	}
	return apitypes.RevokedAPIKey{Key: s.apiKeyView(k), Revoked: revoked, AlsoRevoked: descendants}, nil
}
