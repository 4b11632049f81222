package cluster_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/cli"
	"github.com/shardjob/shardjob/deploy/dev/testenv/cluster"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestParseLineReadsSlogText(t *testing.T) {
	t.Parallel()
	l := cluster.ParseLine(`time=2026-03-01T12:00:00.5Z level=DEBUG msg="slot started" run_id=7 token=42 err="a \"quoted\" word" token=43 empty=`)
	require.Equal(t, "slot started", l.Msg())
	require.Equal(t, time.Date(2026, 3, 1, 12, 0, 0, 500_000_000, time.UTC), l.Time())
	require.Equal(t, int64(7), l.Int("run_id"))
	require.Equal(t, int64(42), l.Int("token"), "the first occurrence of a key wins")
	require.Equal(t, `a "quoted" word`, l["err"])
	require.Empty(t, l["empty"])
	require.Zero(t, l.Int("missing"))

	out := "msg=a x=1\nmsg=b x=2\nmsg=\"a b\" x=3\n"
	lines := cluster.LogLines(out, "msg=a")
	require.Len(t, lines, 1)
	require.Equal(t, int64(1), lines[0].Int("x"))
}

func TestClientLogsInAndSendsTheToken(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api/v1/login":
			var in map[string]string
			_ = json.NewDecoder(r.Body).Decode(&in)
			if in["password"] != "pw" {
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
			_ = json.NewEncoder(w).Encode(map[string]string{"token": "tok"})
		case "/api/v1/runs/1":
			if r.Header.Get("Authorization") != "Bearer tok" {
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
			_ = json.NewEncoder(w).Encode(apitypes.RunDetail{Run: apitypes.Run{ID: 1, Status: "running"}})
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(srv.CloseClientConnections)

	c := cluster.NewClient(srv.URL)
	t.Cleanup(c.HTTP.CloseIdleConnections)
	require.Error(t, c.Do(context.Background(), http.MethodGet, "/api/v1/runs/1", nil, nil), "401 before the login")
	require.Error(t, c.Login(context.Background(), "admin", "wrong"))
	require.NoError(t, c.Login(context.Background(), "admin", "pw"))
	var d apitypes.RunDetail
	require.NoError(t, c.Do(context.Background(), http.MethodGet, "/api/v1/runs/1", nil, &d))
	require.Equal(t, "running", d.Run.Status)
	var ae *cli.APIError
	require.ErrorAs(t, c.Do(context.Background(), http.MethodGet, "/api/v1/nothing", nil, nil), &ae)
	require.Equal(t, http.StatusNotFound, ae.Status)
}

func TestAttemptHelpers(t *testing.T) {
	t.Parallel()
	ex := int64(3)
	atts := []apitypes.Attempt{
		{Token: 1, Slot: 0, Status: "lost"},
		{Token: 2, Slot: 0, Status: "running", Current: true, ExecutorID: &ex},
		{Token: 3, Slot: 1, Status: "succeeded", Current: true},
	}
	cur := cluster.Current(atts)
	require.Len(t, cur, 2)
	require.Equal(t, int64(2), cur[0].Token)
	require.Equal(t, int64(3), cluster.ExecutorOf(cur[0]))
	require.Zero(t, cluster.ExecutorOf(cur[1]))
	require.Contains(t, cluster.AttemptString(cur[0]), "token 2 (slot 0, attempt 0, executor 3): running current=true")
	require.True(t, cluster.Terminal["succeeded"])
	require.False(t, cluster.Terminal["running"])
}
