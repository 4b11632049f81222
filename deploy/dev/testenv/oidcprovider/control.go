package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// The misbehaviours the next token response can have. Each is armed by
// POST /control/next-token and spent by the next request to the token
// endpoint (code exchange or refresh), whatever its outcome.
//
// Most go through zitadel's op as it is, by what the storage hands it:
// expired and clock (the client's ID token lifetime and clock skew),
// unknown-key and forged (the signing key), wrong-nonce (the auth request
// found by the code), wrong-issuer (the issuer of the token request). op
// always puts the client id into the audience, so wrong-audience rewrites
// the ID token op made and signs it again with the current key; tampered
// rewrites a claim and keeps op's signature.
const (
	badExpired    = "expired"        // expired By ago (default 10m)
	badClock      = "clock"          // made as if the provider's clock were By ahead (negative: behind)
	badUnknownKey = "unknown-key"    // signed by a key the JWKS does not hold, under its own kid
	badForged     = "forged"         // signed by another key under the current kid
	badTampered   = "tampered"       // groups changed after signing
	badAudience   = "wrong-audience" // aud and azp name another client, validly signed
	badIssuer     = "wrong-issuer"   // iss is not the provider's issuer
	badNonce      = "wrong-nonce"    // nonce is not the one of the authorization request
)

// misbehaviour of the next token response; Kind "" is none.
type misbehaviour struct {
	Kind  string
	Shift time.Duration // how far the token's times move (expired, clock)
}

type misbehaviourKey struct{}

func misbehaviourFrom(ctx context.Context) misbehaviour {
	m, _ := ctx.Value(misbehaviourKey{}).(misbehaviour)
	return m
}

// arm sets the misbehaviour of the next token response.
func (s *storage) arm(m misbehaviour) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.next = m
}

// take spends the armed misbehaviour.
func (s *storage) take() misbehaviour {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.next
	s.next = misbehaviour{}
	return m
}

// tokenEndpoint wraps the token endpoint of op: it hands the armed
// misbehaviour to the storage through the request's context, and rewrites
// the response for the misbehaviours op cannot produce.
func tokenEndpoint(s *storage, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m := s.take()
		r = r.WithContext(context.WithValue(r.Context(), misbehaviourKey{}, m))
		if m.Kind != badAudience && m.Kind != badTampered {
			next.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		next.ServeHTTP(rec, r)
		body := rec.Body.Bytes()
		if rec.Code == http.StatusOK {
			var err error
			if body, err = rewriteIDToken(body, m.Kind, s.currentKey()); err != nil {
				http.Error(w, "oidcprovider: "+err.Error(), http.StatusInternalServerError)
				return
			}
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.Header().Del("Content-Length")
		w.WriteHeader(rec.Code)
		_, _ = w.Write(body)
	})
}

// rewriteIDToken changes the id_token of a token response.
func rewriteIDToken(body []byte, kind string, k key) ([]byte, error) {
	var resp map[string]any
	if err := json.Unmarshal(body, &resp); err != nil {
		return nil, err
	}
	raw, _ := resp["id_token"].(string)
	parts := strings.Split(raw, ".")
	if len(parts) != 3 {
		return nil, errors.New("the token response holds no ID token to rewrite")
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return nil, err
	}
	var claims map[string]any
	if err := json.Unmarshal(payload, &claims); err != nil {
		return nil, err
	}
	switch kind {
	case badTampered:
		claims["groups"] = []string{"platform-admins"}
		b, err := json.Marshal(claims)
		if err != nil {
			return nil, err
		}
		resp["id_token"] = parts[0] + "." + base64.RawURLEncoding.EncodeToString(b) + "." + parts[2]
	case badAudience:
		claims["aud"] = []string{"another-client"}
		claims["azp"] = "another-client"
		claims["client_id"] = "another-client"
		b, err := json.Marshal(claims)
		if err != nil {
			return nil, err
		}
		signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: k.priv},
			(&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", k.id))
		if err != nil {
			return nil, err
		}
		jws, err := signer.Sign(b)
		if err != nil {
			return nil, err
		}
		if resp["id_token"], err = jws.CompactSerialize(); err != nil {
			return nil, err
		}
	}
	return json.Marshal(resp)
}

// control serves /control/, for loopback callers only:
//
//	POST /control/groups      {"username": "alice", "groups": ["a", "b"]}
//	POST /control/disable     {"username": "alice"}
//	POST /control/rotate      {"drop_old": true}            -> {"kid": "..."}
//	POST /control/next-token  {"misbehaviour": "expired", "by": "30s"}
//	GET  /control/state       -> {"kids": [...], "logouts": n}
//
// Errors answer 400 with a line of text.
func control(s *storage, defaultDrop bool, lifetime time.Duration) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /control/groups", func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			Username string   `json:"username"`
			Groups   []string `json:"groups"`
		}
		if !decode(w, r, &in) {
			return
		}
		reply(w, nil, s.update(in.Username, func(u *user) { u.Groups = in.Groups }))
	})
	mux.HandleFunc("POST /control/disable", func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			Username string `json:"username"`
		}
		if !decode(w, r, &in) {
			return
		}
		reply(w, nil, s.update(in.Username, func(u *user) { u.Disabled = true }))
	})
	mux.HandleFunc("POST /control/rotate", func(w http.ResponseWriter, r *http.Request) {
		in := struct {
			DropOld *bool `json:"drop_old"`
		}{}
		if !decode(w, r, &in) {
			return
		}
		drop := defaultDrop
		if in.DropOld != nil {
			drop = *in.DropOld
		}
		kid, err := s.rotate(drop)
		reply(w, map[string]string{"kid": kid}, err)
	})
	mux.HandleFunc("POST /control/next-token", func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			Misbehaviour string `json:"misbehaviour"`
			By           string `json:"by"`
		}
		if !decode(w, r, &in) {
			return
		}
		m, err := parseMisbehaviour(in.Misbehaviour, in.By, lifetime)
		if err == nil {
			s.arm(m)
		}
		reply(w, nil, err)
	})
	mux.HandleFunc("GET /control/state", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		out := struct {
			Kids    []string `json:"kids"`
			Logouts int      `json:"logouts"`
		}{Logouts: s.logouts}
		for _, k := range s.keys {
			out.Kids = append(out.Kids, k.id)
		}
		s.mu.Unlock()
		reply(w, out, nil)
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, _, err := net.SplitHostPort(r.RemoteAddr)
		if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
			http.Error(w, "the control API answers loopback callers only", http.StatusForbidden)
			return
		}
		mux.ServeHTTP(w, r)
	})
}

func parseMisbehaviour(kind, by string, lifetime time.Duration) (misbehaviour, error) {
	var d time.Duration
	if by != "" {
		var err error
		if d, err = time.ParseDuration(by); err != nil {
			return misbehaviour{}, fmt.Errorf("by %q: %w", by, err)
		}
	}
	switch kind {
	case badExpired:
		if d == 0 {
			d = 10 * time.Minute
		}
		if d < 0 {
			return misbehaviour{}, fmt.Errorf("expired by %s: give how long ago it expired, a positive duration", d)
		}
		return misbehaviour{Kind: kind, Shift: -(lifetime + d)}, nil
	case badClock:
		return misbehaviour{Kind: kind, Shift: d}, nil
	case badUnknownKey, badForged, badTampered, badAudience, badIssuer, badNonce:
		return misbehaviour{Kind: kind}, nil
	}
	return misbehaviour{}, fmt.Errorf("unknown misbehaviour %q: use %s", kind, strings.Join([]string{
		badExpired, badClock, badUnknownKey, badForged, badTampered, badAudience, badIssuer, badNonce}, ", "))
}

// update changes a user.
func (s *storage) update(username string, f func(*user)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	u, ok := s.users[username]
	if !ok {
		return fmt.Errorf("no user %q", username)
	}
	f(u)
	return nil
}

func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	b := new(bytes.Buffer)
	if _, err := b.ReadFrom(http.MaxBytesReader(w, r.Body, 1<<16)); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return false
	}
	if b.Len() == 0 {
		return true
	}
	dec := json.NewDecoder(b)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		http.Error(w, "body: "+err.Error(), http.StatusBadRequest)
		return false
	}
	return true
}

func reply(w http.ResponseWriter, v any, err error) {
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if v == nil {
		v = struct{}{}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}
