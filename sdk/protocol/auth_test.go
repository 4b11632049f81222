package protocol

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func signed(t *testing.T, secret, method, path string, body []byte, at time.Time) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, "http://127.0.0.1:1"+path, bytes.NewReader(body))
	require.NoError(t, err)
	Sign(req, secret, body, at)
	return req
}

func TestVerify(t *testing.T) {
	t.Parallel()
	secret := NewSecret()
	now := time.UnixMilli(1_800_000_000_000)
	clock := func() time.Time { return now }
	body := []byte(`{"instance_id":"x"}`)

	cases := []struct {
		name    string
		mutate  func(r *http.Request) (method, path string, b []byte)
		at      time.Time
		secret  string
		wantErr error
	}{
		{name: "valid", at: now, secret: secret},
		{name: "wrong secret", at: now, secret: NewSecret(), wantErr: ErrBadSignature},
		{name: "too old", at: now.Add(-31 * time.Second), secret: secret, wantErr: ErrClockWindow},
		{name: "from the future", at: now.Add(31 * time.Second), secret: secret, wantErr: ErrClockWindow},
		{name: "body changed", at: now, secret: secret, wantErr: ErrBadSignature,
			mutate: func(r *http.Request) (string, string, []byte) {
				return r.Method, r.URL.Path, []byte(`{"instance_id":"y"}`)
			}},
		{name: "path changed", at: now, secret: secret, wantErr: ErrBadSignature,
			mutate: func(r *http.Request) (string, string, []byte) { return r.Method, PathDeregister, body }},
		{name: "method changed", at: now, secret: secret, wantErr: ErrBadSignature,
			mutate: func(r *http.Request) (string, string, []byte) { return http.MethodPut, r.URL.Path, body }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			v := NewVerifier(secret, 30*time.Second, clock)
			req := signed(t, tc.secret, http.MethodPost, PathHeartbeat, body, tc.at)
			method, path, b := req.Method, req.URL.Path, body
			if tc.mutate != nil {
				method, path, b = tc.mutate(req)
			}
			err := v.Verify(method, path, req.Header, b)
			if tc.wantErr == nil {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, tc.wantErr)
		})
	}
}

func TestVerifyRefusesReplayAndUnsigned(t *testing.T) {
	t.Parallel()
	secret := NewSecret()
	v := NewVerifier(secret, 0, nil)
	body := []byte(`{}`)
	req := signed(t, secret, http.MethodPost, PathResults, body, time.Now())
	require.NoError(t, v.Verify(req.Method, req.URL.Path, req.Header, body))
	require.ErrorIs(t, v.Verify(req.Method, req.URL.Path, req.Header, body), ErrReplay)

	unsigned, err := http.NewRequest(http.MethodPost, "http://127.0.0.1:1"+PathResults, nil)
	require.NoError(t, err)
	require.ErrorIs(t, v.Verify(unsigned.Method, unsigned.URL.Path, unsigned.Header, nil), ErrUnsigned)
}

func TestVerifyRequestRestoresBodyAndLimits(t *testing.T) {
	t.Parallel()
	secret := NewSecret()
	v := NewVerifier(secret, 0, nil)
	body := []byte(`{"a":1}`)
	req := signed(t, secret, http.MethodPost, PathAssign, body, time.Now())
	got, err := v.VerifyRequest(req, 1024)
	require.NoError(t, err)
	require.Equal(t, body, got)

	big := bytes.Repeat([]byte("x"), 2048)
	req = signed(t, secret, http.MethodPost, PathAssign, big, time.Now())
	_, err = v.VerifyRequest(req, 1024)
	require.EqualError(t, err, "body larger than 1024 bytes")
	var mbe *http.MaxBytesError
	require.ErrorAs(t, err, &mbe, "typed: callers answer 413 without reading the message")
	require.Equal(t, int64(1024), mbe.Limit)

	// A body cut by an http.MaxBytesReader before the verifier's limit is
	// the same error type.
	req = signed(t, secret, http.MethodPost, PathAssign, big, time.Now())
	req.Body = http.MaxBytesReader(nil, req.Body, 1024)
	_, err = v.VerifyRequest(req, 1024)
	require.ErrorAs(t, err, &mbe)
	require.Equal(t, int64(1024), mbe.Limit)
}

func TestValidateSecret(t *testing.T) {
	t.Parallel()
	require.ErrorIs(t, ValidateSecret("short"), ErrWeakSecret)
	require.NoError(t, ValidateSecret(NewSecret()))
}

// mapNonces is a NonceStore in memory, shared by several Verifiers as the
// database is shared by admin replicas.
type mapNonces struct {
	mu      sync.Mutex
	expires map[string]time.Time
	err     error
}

func (m *mapNonces) Claim(_ context.Context, nonce string, expires time.Time) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.err != nil {
		return false, m.err
	}
	if _, ok := m.expires[nonce]; ok {
		return false, nil
	}
	m.expires[nonce] = expires
	return true, nil
}

func TestSharedNoncesRefuseAReplayToAnotherVerifier(t *testing.T) {
	t.Parallel()
	secret := NewSecret()
	now := time.UnixMilli(1_800_000_000_000)
	clock := func() time.Time { return now }
	shared := &mapNonces{expires: map[string]time.Time{}}
	one := NewVerifier(secret, 30*time.Second, clock).SharedNonces(shared)
	other := NewVerifier(secret, 30*time.Second, clock).SharedNonces(shared)
	body := []byte(`{}`)
	at := now.Add(-5 * time.Second)
	req := signed(t, secret, http.MethodPost, PathResults, body, at)
	require.NoError(t, one.Verify(req.Method, req.URL.Path, req.Header, body))
	require.ErrorIs(t, other.Verify(req.Method, req.URL.Path, req.Header, body), ErrReplay, "replayed to another verifier")
	require.ErrorIs(t, one.Verify(req.Method, req.URL.Path, req.Header, body), ErrReplay)
	require.Equal(t, at.Add(30*time.Second), shared.expires[req.Header.Get(HeaderNonce)], "kept while its timestamp is in the window")

	// A forged request never reaches the store.
	forged := signed(t, NewSecret(), http.MethodPost, PathResults, body, now)
	require.ErrorIs(t, other.Verify(forged.Method, forged.URL.Path, forged.Header, body), ErrBadSignature)
	require.Len(t, shared.expires, 1)

	shared.err = errors.New("database down")
	fresh := signed(t, secret, http.MethodPost, PathResults, body, now)
	err := other.Verify(fresh.Method, fresh.URL.Path, fresh.Header, body)
	require.ErrorIs(t, err, ErrNonceUnchecked)
	require.ErrorContains(t, err, "database down")
}
