package api_test

import (
	"maps"
	"net/http"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/auth"
	"github.com/shardjob/shardjob/admin/internal/clock"
	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/admin/store/storetest"
)

// TestJobWithSeveralZones: the preview of a job with time_zones gives each
// firing its zone (Shanghai and Singapore coincide: once, tagged Shanghai,
// Singapore as also_zones) across London's spring forward; the job is
// created with time_zone the first zone, answered with its list, and its
// run says its zone; bad lists are 400s keyed by the field.
func TestJobWithSeveralZones(t *testing.T) {
	t.Parallel()
	storetest.EachDialect(t, func(t *testing.T, st *store.Store) {
		e := newEnvWithClock(t, st, clock.NewManual(time.Date(2026, 3, 28, 0, 0, 0, 0, time.UTC)))
		e.user("ops", auth.RoleOperator)
		ops := e.token("ops")
		zones := []string{"Asia/Shanghai", "Asia/Singapore", "Europe/London"}
		job := with("cron", "0 9 * * *")
		delete(job, "time_zone")
		job["time_zones"] = zones

		type firing struct {
			At        time.Time `json:"at"`
			Local     string    `json:"local"`
			Zone      string    `json:"zone"`
			AlsoZones []string  `json:"also_zones"`
		}
		var pv struct {
			Valid bool
			Next  []firing
		}
		require.Equal(t, http.StatusOK, e.call("POST", "/api/v1/jobs/validate", ops, job, &pv))
		require.True(t, pv.Valid)
		require.Len(t, pv.Next, 10)
		require.Equal(t, []firing{
			{time.Date(2026, 3, 28, 1, 0, 0, 0, time.UTC), "2026-03-28 09:00:00 CST", "Asia/Shanghai", []string{"Asia/Singapore"}},
			{time.Date(2026, 3, 28, 9, 0, 0, 0, time.UTC), "2026-03-28 09:00:00 GMT", "Europe/London", nil},
			{time.Date(2026, 3, 29, 1, 0, 0, 0, time.UTC), "2026-03-29 09:00:00 CST", "Asia/Shanghai", []string{"Asia/Singapore"}},
			{time.Date(2026, 3, 29, 8, 0, 0, 0, time.UTC), "2026-03-29 09:00:00 BST", "Europe/London", nil},
		}, pv.Next[:4])

		var created apitypes.Job
		require.Equal(t, http.StatusCreated, e.call("POST", "/api/v1/jobs", ops, job, &created))
		require.Equal(t, "Asia/Shanghai", created.TimeZone)
		require.Equal(t, zones, created.TimeZones)
		require.Equal(t, time.Date(2026, 3, 28, 1, 0, 0, 0, time.UTC), created.NextFireAt.UTC())
		var got apitypes.Job
		path := "/api/v1/jobs/" + strconv.FormatInt(created.ID, 10)
		require.Equal(t, http.StatusOK, e.call("GET", path, ops, nil, &got))
		require.Equal(t, zones, got.TimeZones)
		var trig struct{ Run apitypes.Run }
		require.Equal(t, http.StatusCreated, e.call("POST", path+"/trigger", ops, nil, &trig))
		var run apitypes.RunDetail
		require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/runs/"+strconv.FormatInt(trig.Run.ID, 10), ops, nil, &run))
		require.Equal(t, "Asia/Shanghai", run.Run.TimeZone, "a manual run is in the job's (first) zone")

		// One zone in the list is the job's time_zone: no list answered.
		single := with("name", "single")
		single["time_zones"] = []string{"Asia/Shanghai"}
		var one apitypes.Job
		require.Equal(t, http.StatusCreated, e.call("POST", "/api/v1/jobs", ops, single, &one))
		require.Equal(t, "Asia/Shanghai", one.TimeZone)
		require.Nil(t, one.TimeZones)

		for _, c := range []struct {
			name  string
			set   map[string]any
			field string
			code  msg.Code
		}{
			{"duplicate", map[string]any{"time_zones": []string{"Asia/Tokyo", "Europe/London", "Asia/Tokyo"}}, "time_zones", msg.ZonesDuplicate},
			{"too many", map[string]any{"time_zones": []string{"UTC", "Asia/Tokyo", "Asia/Seoul", "Asia/Kolkata", "Europe/London",
				"Europe/Paris", "America/New_York", "America/Chicago", "America/Denver"}}, "time_zones", msg.ZonesTooMany},
			{"unknown", map[string]any{"time_zones": []string{"Asia/Tokyo", "Mars/Olympus"}}, "time_zones", msg.ZoneError},
			{"every", map[string]any{"cron": "@every 1h", "time_zones": []string{"Asia/Tokyo", "Europe/London"}}, "time_zones", msg.ZonesEvery},
			{"at", map[string]any{"cron": "@at 2026-12-24T18:00", "time_zones": []string{"Asia/Tokyo", "Europe/London"}}, "time_zones", msg.ZonesAt},
			{"dense", map[string]any{"cron": "*/30 * * * *", "time_zones": []string{"Asia/Tokyo", "Europe/London"}}, "time_zones", msg.ZonesTooDense},
			{"not first", map[string]any{"time_zone": "UTC", "time_zones": []string{"Asia/Tokyo", "Europe/London"}}, "time_zone", msg.ZonesFirst},
		} {
			body := withAll(c.set)
			if _, ok := c.set["time_zone"]; !ok {
				delete(body, "time_zone")
			}
			for _, p := range []string{"/api/v1/jobs", "/api/v1/jobs/validate"} {
				var ans errorAnswer
				require.Equal(t, http.StatusBadRequest, e.call("POST", p, ops, body, &ans), "%s %s: %+v", c.name, p, ans)
				require.Equal(t, []string{c.field}, slices.Collect(maps.Keys(ans.FieldCodes)), c.name)
				require.Equal(t, c.code, ans.FieldCodes[c.field].Code, c.name)
				require.Equal(t, ans.Fields[c.field], ans.FieldCodes[c.field].String(), c.name)
			}
		}
		// Nothing was written by the refusals.
		var list struct{ Jobs []apitypes.Job }
		require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/jobs", ops, nil, &list))
		require.Len(t, list.Jobs, 2)
	})
}
