package protocol

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// Header names of a signed request.
const (
	HeaderTimestamp = "X-Shardjob-Timestamp" // Unix milliseconds
	HeaderNonce     = "X-Shardjob-Nonce"     // 16 random bytes, hex
	HeaderSignature = "X-Shardjob-Signature" // hex HMAC-SHA256
)

// MinSecretLen is the shortest secret accepted.
const MinSecretLen = 16

// Errors returned by Verifier.Verify; wrap-compatible with errors.Is.
var (
	ErrUnsigned     = errors.New("request is not signed: missing " + HeaderSignature + ", " + HeaderTimestamp + " or " + HeaderNonce)
	ErrBadSignature = errors.New("signature does not match: check that admin and executor use the same secret")
	ErrClockWindow  = errors.New("timestamp outside the allowed clock window: check the clocks (NTP) of admin and executor")
	ErrReplay       = errors.New("nonce already used: request replayed")
	// ErrNonceUnchecked: the shared nonce store failed, so the request could
	// not be checked for a replay and is refused; the sender may retry it
	// (signed anew). Not the sender's fault: answer 503, not 401.
	ErrNonceUnchecked = errors.New("could not check the request's nonce for a replay; retry")
	ErrWeakSecret     = fmt.Errorf("secret must be at least %d characters", MinSecretLen)
)

// ValidateSecret reports whether a secret is acceptable.
func ValidateSecret(secret string) error {
	if len(secret) < MinSecretLen {
		return ErrWeakSecret
	}
	return nil
}

// NewSecret returns a random 32-byte secret, hex encoded.
func NewSecret() string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(fmt.Sprintf("crypto/rand failed: %v", err))
	}
	return hex.EncodeToString(b)
}

func mac(secret []byte, method, path, ts, nonce string, body []byte) string {
	sum := sha256.Sum256(body)
	h := hmac.New(sha256.New, secret)
	// Fields are newline separated; none of them can contain a newline.
	fmt.Fprintf(h, "%s\n%s\n%s\n%s\n%x", method, path, ts, nonce, sum)
	return hex.EncodeToString(h.Sum(nil))
}

// Sign adds the signature headers to req, whose body is body (which must be
// the exact bytes sent).
func Sign(req *http.Request, secret string, body []byte, now time.Time) {
	nonce := make([]byte, 16)
	if _, err := rand.Read(nonce); err != nil {
		panic(fmt.Sprintf("crypto/rand failed: %v", err))
	}
	ts := strconv.FormatInt(now.UnixMilli(), 10)
	n := hex.EncodeToString(nonce)
	req.Header.Set(HeaderTimestamp, ts)
	req.Header.Set(HeaderNonce, n)
	req.Header.Set(HeaderSignature, mac([]byte(secret), req.Method, req.URL.Path, ts, n, body))
}

// NonceStore remembers the nonces of accepted requests for several
// processes that verify requests signed with one secret (the admin replicas,
// which an executor reaches through one address), so that a request accepted
// by one of them is refused by all. Claim records nonce until expires and
// reports whether it was new.
type NonceStore interface {
	Claim(ctx context.Context, nonce string, expires time.Time) (bool, error)
}

// Verifier checks signed requests: signature, clock window and replay.
// It is safe for concurrent use.
type Verifier struct {
	secret []byte
	window time.Duration
	now    func() time.Time
	shared NonceStore // nil: nonces are remembered in this process only

	mu     sync.Mutex
	seen   map[string]time.Time // nonce → expiry
	sweeps int
}

// NewVerifier returns a Verifier that accepts timestamps within ±window of
// now(). A zero window means 30 seconds; a nil now means time.Now.
func NewVerifier(secret string, window time.Duration, now func() time.Time) *Verifier {
	if window <= 0 {
		window = 30 * time.Second
	}
	if now == nil {
		now = time.Now
	}
	return &Verifier{secret: []byte(secret), window: window, now: now, seen: map[string]time.Time{}}
}

// SharedNonces makes v check and record nonces in store instead of in this
// process, and returns v. Use it when several processes verify requests
// signed with the same secret and a request may reach any of them: with
// process-local memory, a captured request could be replayed once to each
// other process within the clock window.
func (v *Verifier) SharedNonces(store NonceStore) *Verifier {
	v.shared = store
	return v
}

// Verify checks the headers of a request with the given method, path and body.
func (v *Verifier) Verify(method, path string, h http.Header, body []byte) error {
	return v.VerifyContext(context.Background(), method, path, h, body)
}

// VerifyContext is Verify; ctx bounds the shared nonce store's work.
func (v *Verifier) VerifyContext(ctx context.Context, method, path string, h http.Header, body []byte) error {
	ts, nonce, sig := h.Get(HeaderTimestamp), h.Get(HeaderNonce), h.Get(HeaderSignature)
	if ts == "" || nonce == "" || sig == "" {
		return ErrUnsigned
	}
	if len(nonce) > 64 {
		return ErrBadSignature
	}
	ms, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return fmt.Errorf("%w: %q is not Unix milliseconds", ErrUnsigned, ts)
	}
	want := mac(v.secret, method, path, ts, nonce, body)
	if !hmac.Equal([]byte(want), []byte(sig)) {
		return ErrBadSignature
	}
	now := v.now()
	at := time.UnixMilli(ms)
	if at.Before(now.Add(-v.window)) || at.After(now.Add(v.window)) {
		return fmt.Errorf("%w (skew %s, window ±%s)", ErrClockWindow, now.Sub(at).Round(time.Millisecond), v.window)
	}
	// A nonce only needs remembering while its timestamp is inside the window.
	if v.shared != nil {
		fresh, err := v.shared.Claim(ctx, nonce, at.Add(v.window))
		if err != nil {
			return fmt.Errorf("%w: %w", ErrNonceUnchecked, err)
		}
		if !fresh {
			return ErrReplay
		}
		return nil
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if exp, ok := v.seen[nonce]; ok && exp.After(now) {
		return ErrReplay
	}
	v.seen[nonce] = at.Add(v.window)
	v.sweeps++
	if v.sweeps >= 1024 {
		v.sweeps = 0
		for n, exp := range v.seen {
			if !exp.After(now) {
				delete(v.seen, n)
			}
		}
	}
	return nil
}

// VerifyRequest reads (at most limit bytes of) the body of r, verifies it, and
// replaces r.Body so that handlers can read it again. It returns the body.
// A body larger than limit is an error that errors.As finds as
// *http.MaxBytesError, as it finds the error of a body that r.Body (an
// http.MaxBytesReader) cut.
func (v *Verifier) VerifyRequest(r *http.Request, limit int64) ([]byte, error) {
	body, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read body: %w", err)
	}
	if int64(len(body)) > limit {
		return nil, &bodyTooLargeError{limit: limit}
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	if err := v.VerifyContext(r.Context(), r.Method, r.URL.Path, r.Header, body); err != nil {
		return nil, err
	}
	return body, nil
}

// bodyTooLargeError is VerifyRequest's error for a body over its limit:
// "body larger than N bytes", which unwraps to the *http.MaxBytesError of
// the same limit.
type bodyTooLargeError struct{ limit int64 }

func (e *bodyTooLargeError) Error() string { return fmt.Sprintf("body larger than %d bytes", e.limit) }
func (e *bodyTooLargeError) Unwrap() error { return &http.MaxBytesError{Limit: e.limit} }
