package api_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/schedule"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/admin/store/storetest"
)

// TestJitterWindowAPI: jitter_window round-trips ("0" is none); the
// preview lists each firing's start_after, the scheduled time plus the
// firing's offset; bad windows (not a duration, negative, over 12h, longer
// than the gap between two firings) are a 400 naming jitter_window with a
// code, and write nothing.
func TestJitterWindowAPI(t *testing.T) {
	t.Parallel()
	storetest.EachDialect(t, func(t *testing.T, st *store.Store) {
		e, ops := windowEnv(t, st)

		// Daily at 03:00 in Shanghai (19:00Z the day before).
		body := withAll(map[string]any{"name": "spread", "cron": "0 3 * * *", "jitter_window": "45m"})
		var preview struct {
			Next []struct {
				At         time.Time  `json:"at"`
				StartAfter *time.Time `json:"start_after"`
			} `json:"next"`
		}
		require.Equal(t, http.StatusOK, e.call("POST", "/api/v1/jobs/validate", ops, body, &preview))
		require.Len(t, preview.Next, 10)
		distinct := map[time.Duration]bool{}
		for _, p := range preview.Next {
			require.NotNil(t, p.StartAfter, "firing %s", p.At)
			off := p.StartAfter.Sub(p.At)
			require.Equal(t, schedule.JitterOffset("billing/spread", p.At, 45*time.Minute), off, "firing %s", p.At)
			require.GreaterOrEqual(t, off, time.Duration(0))
			require.Less(t, off, 45*time.Minute)
			distinct[off] = true
		}
		require.Greater(t, len(distinct), 5, "offsets differ from firing to firing")

		var j apitypes.Job
		require.Equal(t, http.StatusCreated, e.call("POST", "/api/v1/jobs", ops, body, &j))
		require.Equal(t, "45m", j.JitterWindow)
		var got apitypes.Job
		require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/jobs/"+itoa(j.ID), ops, nil, &got))
		require.Equal(t, "45m", got.JitterWindow)

		var none apitypes.Job
		require.Equal(t, http.StatusCreated, e.call("POST", "/api/v1/jobs", ops, withAll(map[string]any{"name": "none", "jitter_window": "0"}), &none))
		require.Empty(t, none.JitterWindow, `"0" is no window`)
		var plain struct {
			Next []map[string]any `json:"next"`
		}
		require.Equal(t, http.StatusOK, e.call("POST", "/api/v1/jobs/validate", ops, with("name", "plain"), &plain))
		require.NotEmpty(t, plain.Next)
		require.NotContains(t, plain.Next[0], "start_after", "no start_after without a window")

		for _, tc := range []struct {
			name, cron, window, words string
			code                      msg.Code
		}{
			{"not a duration", "0 3 * * *", "soon", "not a duration", msg.JitterNotDuration},
			{"a bare number", "0 3 * * *", "10", "not a duration", msg.JitterNotDuration},
			{"negative", "0 3 * * *", "-5m", "outside 0 to 12h", msg.JitterOutside},
			{"over 12h", "0 3 * * *", "13h", "outside 0 to 12h", msg.JitterOutside},
			{"longer than the gap", "*/5 * * * *", "6m", "longer than the 5m0s between the firings", msg.JitterGap},
			{"longer than the shortest gap", "0 9,10 * * *", "2h", "longer than the 1h0m0s between the firings", msg.JitterGap},
		} {
			for _, path := range []string{"/api/v1/jobs", "/api/v1/jobs/validate"} {
				var ans errorAnswer
				b := withAll(map[string]any{"name": "bad", "cron": tc.cron, "jitter_window": tc.window})
				require.Equal(t, http.StatusBadRequest, e.call("POST", path, ops, b, &ans), "%s %s", tc.name, path)
				require.Contains(t, ans.Fields["jitter_window"], tc.words, tc.name)
				require.Equal(t, tc.code, ans.FieldCodes["jitter_window"].Code, tc.name)
				require.Len(t, ans.Fields, 1, "%s: only jitter_window is wrong: %v", tc.name, ans.Fields)
			}
		}
		// A window equal to the gap is allowed: the last offset is just
		// short of the next firing.
		require.Equal(t, http.StatusOK, e.call("POST", "/api/v1/jobs/validate", ops, withAll(map[string]any{"name": "edge", "cron": "*/5 * * * *", "jitter_window": "5m"}), nil))
		require.Equal(t, 2, e.countJobs(), "the bad ones wrote nothing")
	})
}
