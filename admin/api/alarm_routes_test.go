package api_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/api"
	"github.com/shardjob/shardjob/admin/auth"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/admin/store/storetest"
	"github.com/shardjob/shardjob/sdk/protocol"
)

// fakeChannels has a webhook "ops" and an email channel "mail"; "broken"
// fails its test.
type fakeChannels struct {
	mu    sync.Mutex
	tests []string
}

func (f *fakeChannels) AlarmChannel(name string) (bool, bool) {
	switch name {
	case "ops", "broken":
		return true, false
	case "mail":
		return true, true
	}
	return false, false
}

func (f *fakeChannels) SendTest(_ context.Context, name, actor string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tests = append(f.tests, name+" by "+actor)
	if name == "broken" {
		return errors.New("post to https://hooks.example.com: 503 Service Unavailable")
	}
	return nil
}

var _ api.AlarmChannels = (*fakeChannels)(nil)

func TestAlarmRoutesAPI(t *testing.T) {
	t.Parallel()
	storetest.EachDialect(t, func(t *testing.T, st *store.Store) {
		ch := &fakeChannels{}
		h, err := api.New(api.Config{Store: st, ExecutorSecret: protocol.NewSecret(), AlarmChannels: ch})
		require.NoError(t, err)
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)
		e := &env{t: t, st: st, srv: srv}
		e.user("boss", auth.RoleAdmin)
		e.user("ops", auth.RoleOperator)
		e.user("eve", auth.RoleViewer)
		boss, ops, eve := e.token("boss"), e.token("ops"), e.token("eve")

		var job struct{ ID int64 }
		require.Equal(t, http.StatusCreated, e.call("POST", "/api/v1/jobs", ops, validJob, &job))
		path := "/api/v1/jobs/" + itoa(job.ID) + "/alarm-routes"

		var got struct{ Routes []map[string]string }
		require.Equal(t, http.StatusOK, e.call("GET", path, eve, nil, &got))
		require.Empty(t, got.Routes)

		routes := map[string]any{"routes": []map[string]string{{"channel": "ops"}, {"channel": "mail", "recipient": "owner@example.com"}}}
		require.Equal(t, http.StatusForbidden, e.call("PUT", path, eve, routes, nil), "viewers cannot change routes")
		require.Equal(t, http.StatusOK, e.call("PUT", path, ops, routes, &got))
		require.Equal(t, []map[string]string{{"channel": "mail", "recipient": "owner@example.com"}, {"channel": "ops"}}, got.Routes)
		require.Equal(t, http.StatusOK, e.call("GET", path, eve, nil, &got))
		require.Len(t, got.Routes, 2)
		audit, err := st.AuditLog(context.Background(), 0, 10, store.AuditScope{All: true}, store.AuditFilter{})
		require.NoError(t, err)
		require.Equal(t, "job.alarm_routes", audit[0].Action)
		require.Contains(t, audit[0].Detail, "owner@example.com")

		cases := []struct {
			name  string
			body  any
			field string
		}{
			{"unknown channel", map[string]any{"routes": []map[string]string{{"channel": "pager"}}}, "routes[0].channel"},
			{"missing channel", map[string]any{"routes": []map[string]string{{"recipient": "a@example.com"}}}, "routes[0].channel"},
			{"recipient on webhook", map[string]any{"routes": []map[string]string{{"channel": "ops", "recipient": "a@example.com"}}}, "routes[0].recipient"},
			{"bad address", map[string]any{"routes": []map[string]string{{"channel": "mail", "recipient": "Owner <a@example.com>"}}}, "routes[0].recipient"},
			{"header injection", map[string]any{"routes": []map[string]string{{"channel": "mail", "recipient": "a@example.com\r\nBcc: x@example.com"}}}, "routes[0].recipient"},
			{"duplicate", map[string]any{"routes": []map[string]string{{"channel": "ops"}, {"channel": "ops"}}}, "routes[1]"},
			{"no routes field", map[string]any{}, "routes"},
		}
		for _, tc := range cases {
			var out struct {
				Error  string
				Fields map[string]string
			}
			require.Equal(t, http.StatusBadRequest, e.call("PUT", path, ops, tc.body, &out), tc.name)
			require.NotEmpty(t, out.Fields[tc.field], "%s: message for %s in %v", tc.name, tc.field, out)
		}
		require.Equal(t, http.StatusBadRequest, e.call("PUT", path, ops, `{"routes":"ops"}`, nil))
		require.Equal(t, http.StatusNotFound, e.call("GET", "/api/v1/jobs/999999/alarm-routes", eve, nil, nil))
		require.Equal(t, http.StatusBadRequest, e.call("GET", "/api/v1/jobs/x/alarm-routes", eve, nil, nil))
		require.Equal(t, http.StatusOK, e.call("GET", path, eve, nil, &got))
		require.Len(t, got.Routes, 2, "rejected changes wrote nothing")

		// An empty list removes every route.
		require.Equal(t, http.StatusOK, e.call("PUT", path, ops, map[string]any{"routes": []any{}}, &got))
		require.Empty(t, got.Routes)

		// Channel tests: admins only.
		require.Equal(t, http.StatusForbidden, e.call("POST", "/api/v1/alarm-channels/ops/test", ops, nil, nil))
		require.Equal(t, http.StatusOK, e.call("POST", "/api/v1/alarm-channels/ops/test", boss, nil, nil))
		require.Equal(t, http.StatusNotFound, e.call("POST", "/api/v1/alarm-channels/pager/test", boss, nil, nil))
		var out struct{ Error string }
		require.Equal(t, http.StatusBadGateway, e.call("POST", "/api/v1/alarm-channels/broken/test", boss, nil, &out))
		require.Contains(t, out.Error, "503")
		require.Equal(t, []string{"ops by boss", "broken by boss"}, ch.tests)
	})
}

func TestAlarmRoutesWithoutChannels(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, e *env) {
		e.user("ops", auth.RoleOperator)
		ops := e.token("ops")
		var job struct{ ID int64 }
		require.Equal(t, http.StatusCreated, e.call("POST", "/api/v1/jobs", ops, validJob, &job))
		var out struct{ Fields map[string]string }
		require.Equal(t, http.StatusBadRequest, e.call("PUT", "/api/v1/jobs/"+itoa(job.ID)+"/alarm-routes", ops,
			map[string]any{"routes": []map[string]string{{"channel": "ops"}}}, &out))
		require.Contains(t, out.Fields["routes[0].channel"], "--alarm-channels")
	})
}
