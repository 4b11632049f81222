package jobdef

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/apitypes"
)

func TestValidateZones(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 7, 10, 0, 0, 0, time.UTC)
	spec := apitypes.JobSpec{JobDef: apitypes.JobDef{App: "a", Name: "n", Handler: "h", Cron: "0 9 * * *",
		TimeZones: []string{"Asia/Tokyo", "Europe/London", "America/New_York"}}}
	v, err := Validate(spec, now)
	require.NoError(t, err)
	require.Equal(t, "Asia/Tokyo", v.Job.TimeZone, "time_zone is the first zone")
	require.Equal(t, "Asia/Tokyo,Europe/London,America/New_York", v.Job.TimeZones)
	// The next firing is the union's: 09:00 EST in New York at 14:00Z
	// (Tokyo's 09:00 was at 00:00Z, London's at 09:00Z, before now).
	require.Equal(t, time.Date(2026, 3, 7, 14, 0, 0, 0, time.UTC).UnixMilli(), v.Job.NextFireAt.Int64)
	back := View(v.Job).JobDef
	require.Equal(t, spec.TimeZones, back.TimeZones)
	require.Equal(t, "Asia/Tokyo", back.TimeZone)

	// One zone in the list is time_zone alone: nothing stored in time_zones.
	one := spec
	one.TimeZones = []string{"Europe/London"}
	v, err = Validate(one, now)
	require.NoError(t, err)
	require.Equal(t, "Europe/London", v.Job.TimeZone)
	require.Empty(t, v.Job.TimeZones)
	require.Nil(t, View(v.Job).TimeZones)

	// time_zone may be given too, as the first of the list.
	both := spec
	both.TimeZone = "Asia/Tokyo"
	_, err = Validate(both, now)
	require.NoError(t, err)
}
