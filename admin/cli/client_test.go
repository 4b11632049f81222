package cli_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/cli"
)

// echoAdmin answers /login with a token, /teapot with the admin's error
// body and status 418, and /echo with the request's headers.
func echoAdmin(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/api/v1/login":
			_ = json.NewEncoder(w).Encode(map[string]string{"token": "tok"})
		case "/teapot":
			w.WriteHeader(http.StatusTeapot)
			_, _ = w.Write([]byte(`{"error":"no coffee","fields":{"cup":"is empty"}}`))
		case "/echo":
			_ = json.NewEncoder(w).Encode(map[string]string{
				"authorization": r.Header.Get("Authorization"), "content_type": r.Header.Get("Content-Type"), "csrf": r.Header.Get("X-CSRF-Token")})
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestClientCallReturnsTheStatusAndTheErrorBody(t *testing.T) {
	t.Parallel()
	srv := echoAdmin(t)
	c := &cli.Client{Base: srv.URL, HTTP: srv.Client()}
	ctx := context.Background()

	var out struct {
		Error  string
		Fields map[string]string
	}
	code, err := c.Call(ctx, http.MethodGet, "/teapot", nil, &out)
	require.NoError(t, err, "a status other than 2xx is not an error of Call")
	require.Equal(t, http.StatusTeapot, code)
	require.Equal(t, "no coffee", out.Error)

	var ae *cli.APIError
	require.ErrorAs(t, c.Do(ctx, http.MethodGet, "/teapot", nil, nil), &ae, "it is one of Do")
	require.Equal(t, &cli.APIError{Method: "GET", Path: "/teapot", Status: http.StatusTeapot, Msg: "no coffee", Fields: map[string]string{"cup": "is empty"}}, ae)
}

func TestClientSendsTheTokenOnceLoggedInAndTheCallersHeaders(t *testing.T) {
	t.Parallel()
	srv := echoAdmin(t)
	c := &cli.Client{Base: srv.URL, HTTP: srv.Client()}
	ctx := context.Background()

	var echo map[string]string
	require.NoError(t, c.Do(ctx, http.MethodGet, "/echo", nil, &echo))
	require.Empty(t, echo["authorization"], "no token, no Authorization")

	require.NoError(t, c.Login(ctx, "admin", "pw"))
	require.Equal(t, "tok", c.Token)
	require.NoError(t, c.Do(ctx, http.MethodPost, "/echo", map[string]int{"n": 1}, &echo))
	require.Equal(t, map[string]string{"authorization": "Bearer tok", "content_type": "application/json", "csrf": ""}, echo)

	res, err := c.Send(ctx, http.MethodPost, "/echo", strings.NewReader("a=1"),
		http.Header{"Content-Type": {"text/plain"}, "X-CSRF-Token": {"c1"}, "authorization": {"Bearer other"}})
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, res.Status)
	require.NoError(t, json.Unmarshal(res.Body, &echo))
	require.Equal(t, map[string]string{"authorization": "Bearer other", "content_type": "text/plain", "csrf": "c1"}, echo, "the caller's headers win")
}
