package dispatch

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/sdk/protocol"
)

func TestAssignIsSignedAndDecoded(t *testing.T) {
	t.Parallel()
	secret := protocol.NewSecret()
	v := protocol.NewVerifier(secret, 0, nil)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := v.VerifyRequest(r, 1<<20); err != nil {
			w.WriteHeader(http.StatusUnauthorized)
			_ = json.NewEncoder(w).Encode(protocol.Error{Error: err.Error()})
			return
		}
		var req protocol.AssignRequest
		require.NoError(t, json.NewDecoder(r.Body).Decode(&req))
		var resp protocol.AssignResponse
		for _, a := range req.Assignments {
			for _, s := range a.Attempts {
				resp.Accepted = append(resp.Accepted, s.Token)
			}
		}
		_ = json.NewEncoder(w).Encode(resp)
	}))
	t.Cleanup(srv.Close)

	c, err := New(secret, time.Second)
	require.NoError(t, err)
	resp, err := c.Assign(context.Background(), srv.URL, protocol.AssignRequest{Assignments: []protocol.RunAssignment{{RunID: 1, Attempts: []protocol.SlotAttempt{{Slot: 0, Token: 7}, {Slot: 1, Token: 8}}}}})
	require.NoError(t, err)
	require.Equal(t, []int64{7, 8}, resp.Accepted)

	wrong, err := New(protocol.NewSecret(), time.Second)
	require.NoError(t, err)
	_, err = wrong.Assign(context.Background(), srv.URL, protocol.AssignRequest{})
	require.True(t, IsUnauthorized(err), "%v", err)
	require.ErrorContains(t, err, "answered 401")

	_, err = New("short", time.Second)
	require.ErrorIs(t, err, protocol.ErrWeakSecret)
}

func TestRedirectsAreNotFollowed(t *testing.T) {
	t.Parallel()
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Error("a signed request must not follow a redirect")
	}))
	t.Cleanup(target.Close)
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	t.Cleanup(redirector.Close)
	c, err := New(protocol.NewSecret(), time.Second)
	require.NoError(t, err)
	err = c.Cancel(context.Background(), redirector.URL, protocol.CancelRequest{Tokens: []int64{1}})
	require.ErrorContains(t, err, "answered 307")
}
