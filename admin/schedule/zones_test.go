package schedule

import (
	"errors"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/msg"
)

func mustZones(t testing.TB, expr string, zones ...string) *MultiZone {
	t.Helper()
	m, err := ParseZones(Spec{Expr: expr, JobKey: "app/job"}, zones)
	require.NoError(t, err, "%q in %v", expr, zones)
	return m
}

// zoneFiring is one firing as the tables spell it.
type zoneFiring struct {
	at, zone string
	also     []string
}

func firingsOf(m *MultiZone, after time.Time, n int) []zoneFiring {
	var out []zoneFiring
	for range n {
		at, zone, also, ok := m.NextFiring(after)
		if !ok {
			break
		}
		out = append(out, zoneFiring{at.Format(time.RFC3339), zone, also})
		after = at
	}
	return out
}

func TestMultiZoneFiresAtTheUnionAcrossClockChanges(t *testing.T) {
	t.Parallel()
	const tokyo, london, ny = "Asia/Tokyo", "Europe/London", "America/New_York"
	cases := []struct {
		name  string
		expr  string
		zones []string
		after string
		want  []zoneFiring
	}{
		{
			// New York springs forward on 2026-03-08 (09:00 EDT is 13:00Z);
			// London still on GMT; Tokyo never changes.
			name: "New York springs forward", expr: "0 9 * * *", zones: []string{tokyo, london, ny}, after: "2026-03-06T12:00:00Z",
			want: []zoneFiring{
				{"2026-03-06T14:00:00Z", ny, nil},
				{"2026-03-07T00:00:00Z", tokyo, nil},
				{"2026-03-07T09:00:00Z", london, nil},
				{"2026-03-07T14:00:00Z", ny, nil},
				{"2026-03-08T00:00:00Z", tokyo, nil},
				{"2026-03-08T09:00:00Z", london, nil},
				{"2026-03-08T13:00:00Z", ny, nil},
				{"2026-03-09T00:00:00Z", tokyo, nil},
			},
		},
		{
			// London springs forward on 2026-03-29 at 01:00Z: 09:00 BST is 08:00Z.
			name: "London springs forward", expr: "0 9 * * *", zones: []string{tokyo, london, ny}, after: "2026-03-28T01:00:00Z",
			want: []zoneFiring{
				{"2026-03-28T09:00:00Z", london, nil},
				{"2026-03-28T13:00:00Z", ny, nil},
				{"2026-03-29T00:00:00Z", tokyo, nil},
				{"2026-03-29T08:00:00Z", london, nil},
				{"2026-03-29T13:00:00Z", ny, nil},
				{"2026-03-30T00:00:00Z", tokyo, nil},
			},
		},
		{
			// London falls back on 2026-10-25, New York on 2026-11-01.
			name: "both fall back", expr: "0 9 * * *", zones: []string{london, ny}, after: "2026-10-24T00:00:00Z",
			want: []zoneFiring{
				{"2026-10-24T08:00:00Z", london, nil},
				{"2026-10-24T13:00:00Z", ny, nil},
				{"2026-10-25T09:00:00Z", london, nil},
				{"2026-10-25T13:00:00Z", ny, nil},
				{"2026-10-26T09:00:00Z", london, nil},
				{"2026-10-26T13:00:00Z", ny, nil},
			},
		},
		{
			// Shanghai and Singapore are both UTC+8: every instant coincides,
			// fires once, tagged with the first zone of the list.
			name: "same offset fires once", expr: "0 9 * * *", zones: []string{"Asia/Shanghai", "Asia/Singapore"}, after: "2026-01-01T00:00:00Z",
			want: []zoneFiring{
				{"2026-01-01T01:00:00Z", "Asia/Shanghai", []string{"Asia/Singapore"}},
				{"2026-01-02T01:00:00Z", "Asia/Shanghai", []string{"Asia/Singapore"}},
			},
		},
		{
			// UTC and London coincide in winter and part in summer.
			name: "coincide until London springs forward", expr: "0 9 * * *", zones: []string{"UTC", london}, after: "2026-03-28T00:00:00Z",
			want: []zoneFiring{
				{"2026-03-28T09:00:00Z", "UTC", []string{london}},
				{"2026-03-29T08:00:00Z", london, nil},
				{"2026-03-29T09:00:00Z", "UTC", nil},
			},
		},
		{
			// Each zone keeps its own gap rule: 02:30 does not exist in New
			// York on 2026-03-08 and fires at 03:00 EDT (07:00Z) there.
			name: "a fixed time in one zone's gap", expr: "30 2 * * *", zones: []string{"Asia/Kolkata", ny}, after: "2026-03-07T12:00:00Z",
			want: []zoneFiring{
				{"2026-03-07T21:00:00Z", "Asia/Kolkata", nil},
				{"2026-03-08T07:00:00Z", ny, nil},
				{"2026-03-08T21:00:00Z", "Asia/Kolkata", nil},
				{"2026-03-09T06:30:00Z", ny, nil},
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m := mustZones(t, tc.expr, tc.zones...)
			got := firingsOf(m, utc(t, tc.after), len(tc.want))
			require.Equal(t, tc.want, got)
			// Preview agrees, with Local in the firing's zone.
			pv := m.Preview(utc(t, tc.after), len(tc.want))
			require.Len(t, pv, len(tc.want))
			for i, p := range pv {
				require.Equal(t, tc.want[i].at, p.At.Format(time.RFC3339))
				require.Equal(t, tc.want[i].zone, p.Zone)
				require.Equal(t, tc.want[i].also, p.AlsoZones)
				require.Equal(t, tc.want[i].zone, p.Local.Location().String())
				zone, ok := m.ZoneOf(p.At)
				require.True(t, ok)
				require.Equal(t, tc.want[i].zone, zone)
			}
		})
	}
}

func TestMultiZonePreviewNotesEachZonesClockChange(t *testing.T) {
	t.Parallel()
	m := mustZones(t, "30 2 * * *", "Asia/Tokyo", "America/New_York")
	pv := m.Preview(utc(t, "2026-03-07T08:00:00Z"), 2)
	require.Len(t, pv, 2)
	require.Equal(t, "Asia/Tokyo", pv[0].Zone)
	require.Empty(t, pv[0].Note)
	require.Equal(t, "America/New_York", pv[1].Zone)
	require.Equal(t, utc(t, "2026-03-08T07:00:00Z"), pv[1].At)
	require.Len(t, pv[1].Notes, 1)
	require.Equal(t, msg.DSTGapFiredOne, pv[1].Notes[0].Code)
	require.Equal(t, "03:00", pv[1].Local.Format("15:04"))
}

func TestMultiZoneHPicksTheSameValuesInEveryZone(t *testing.T) {
	t.Parallel()
	m := mustZones(t, "H 9 * * *", "Asia/Tokyo", "Europe/Berlin")
	for _, s := range m.Schedules() {
		require.Equal(t, m.Primary().Resolved(), s.Resolved())
	}
}

func TestParseZonesRefusals(t *testing.T) {
	t.Parallel()
	nine := []string{"UTC", "Asia/Tokyo", "Asia/Seoul", "Asia/Kolkata", "Europe/London", "Europe/Paris", "America/New_York", "America/Chicago", "America/Denver"}
	cases := []struct {
		expr  string
		zones []string
		name  string
		code  msg.Code
	}{
		{"0 9 * * *", nine, "time zones", msg.ZonesTooMany},
		{"0 9 * * *", []string{"Asia/Tokyo", "Europe/London", "Asia/Tokyo"}, "time zones", msg.ZonesDuplicate},
		{"0 9 * * *", []string{"", "UTC"}, "time zones", msg.ZonesDuplicate},
		{"0 9 * * *", []string{"Asia/Tokyo", "Mars/Olympus"}, "time zone", msg.ZoneError},
		{"0 9 * * *", []string{"Asia/Tokyo", "+08:00"}, "time zone", msg.ZoneError},
		{"@every 1h", []string{"Asia/Tokyo", "Europe/London"}, "time zones", msg.ZonesEvery},
		{"@at 2026-12-24T18:00", []string{"Asia/Tokyo", "Europe/London"}, "time zones", msg.ZonesAt},
		{"*/30 * * * *", []string{"Asia/Tokyo", "Europe/London"}, "time zones", msg.ZonesTooDense},
		{"0 25 * * *", []string{"Asia/Tokyo", "Europe/London"}, "hour", msg.ValueOutside},
	}
	for _, tc := range cases {
		_, err := ParseZones(Spec{Expr: tc.expr}, tc.zones)
		require.ErrorIs(t, err, ErrInvalid, "%q %v", tc.expr, tc.zones)
		var ve *ValidationError
		require.True(t, errors.As(err, &ve))
		require.Equal(t, tc.name, ve.Name, "%q %v", tc.expr, tc.zones)
		require.Equal(t, tc.code, ve.Reason.Code, "%q %v: %v", tc.expr, tc.zones, err)
	}
	// One zone accepts what a single schedule accepts; hourly is the
	// densest several zones accept.
	for _, expr := range []string{"@every 1h", "@at 2026-12-24T18:00", "*/30 * * * *"} {
		_, err := ParseZones(Spec{Expr: expr}, []string{"Asia/Tokyo"})
		require.NoError(t, err, expr)
	}
	_, err := ParseZones(Spec{Expr: "0 * * * *"}, []string{"Asia/Tokyo", "Europe/London"})
	require.NoError(t, err)
}

func TestPlanZonesCountsDistinctInstants(t *testing.T) {
	t.Parallel()
	// Shanghai, Singapore (always the same instants) and London: two
	// distinct instants a day. Five days late with skip: 10 skipped.
	m := mustZones(t, "0 9 * * *", "Asia/Shanghai", "Asia/Singapore", "Europe/London")
	next := utc(t, "2026-01-05T01:00:00Z")
	now := utc(t, "2026-01-10T00:30:00Z")
	d := PlanZones(m, next, now, MisfireConfig{Policy: MisfireSkip, Threshold: time.Minute})
	require.Nil(t, d.Fire)
	require.Equal(t, 10, d.SkippedCount)
	require.Equal(t, utc(t, "2026-01-10T01:00:00Z"), d.Next)
	// run_once fires the most recent late firing (London, 09:00Z on the 9th).
	d = PlanZones(m, next, now, MisfireConfig{Policy: MisfireRunOnce, Threshold: time.Minute})
	require.Equal(t, utcs(t, "2026-01-09T09:00:00Z"), d.Fire)
	require.Equal(t, 9, d.SkippedCount)
	// A backlog longer than the list: counted, the last one located.
	d = PlanZones(m, next, utc(t, "2026-06-01T00:00:00Z"), MisfireConfig{Policy: MisfireRunOnce, Threshold: time.Minute})
	require.Equal(t, utcs(t, "2026-05-31T08:00:00Z"), d.Fire) // London on BST
	days := int(utc(t, "2026-06-01T00:00:00Z").Sub(next).Hours()/24) + 1
	require.Equal(t, 2*days-1, d.SkippedCount)
}

// FuzzMultiZoneNext checks the union against its zones: Next is the
// minimum of the zones' Next, strictly increasing (no instant twice), the
// zone of each firing is the first of the list that fires then, and
// countBetween is the number of distinct instants the zones fire at.
func FuzzMultiZoneNext(f *testing.F) {
	exprs := []string{"0 9 * * *", "30 2 * * *", "0 9,17 * * MON-FRI", "0 * * * *", "H H(0-5) * * *", "15 1 1 * *", "0 0 0 * * *", "30 1 * * SUN"}
	f.Add(uint8(0), uint16(0b0111), int64(1772755200), uint64(1))
	f.Add(uint8(1), uint16(0b1100_0001), int64(1792800000), uint64(7))
	f.Add(uint8(3), uint16(0b11), int64(1774742400), uint64(3))
	f.Fuzz(func(t *testing.T, ei uint8, zoneBits uint16, start int64, seed uint64) {
		var zones []string
		for i, z := range fuzzZones {
			if zoneBits&(1<<i) != 0 && len(zones) < MaxZones {
				zones = append(zones, z)
			}
		}
		if len(zones) == 0 {
			return
		}
		rng := rand.New(rand.NewPCG(seed, uint64(start)))
		rng.Shuffle(len(zones), func(i, j int) { zones[i], zones[j] = zones[j], zones[i] })
		expr := exprs[int(ei)%len(exprs)]
		m := mustZones(t, expr, zones...)
		singles := m.Schedules()
		// 2000..2099
		after := time.Unix(946684800+((start%3155760000)+3155760000)%3155760000, 0).UTC()
		lo := after.Unix()
		var got []int64
		for range 40 {
			at, zone, also, ok := m.NextFiring(after)
			want := time.Time{}
			for _, s := range singles {
				if n := s.Next(after); !n.IsZero() && (want.IsZero() || n.Before(want)) {
					want = n
				}
			}
			if !ok {
				require.True(t, want.IsZero())
				break
			}
			require.Equal(t, want, at, "union Next after %s", after)
			require.True(t, at.After(after))
			var fired []string
			for i, s := range singles {
				if s.Next(after).Equal(at) {
					fired = append(fired, m.Zones()[i])
				}
			}
			require.Equal(t, fired[0], zone)
			require.Equal(t, fired[1:], append([]string{}, also...))
			got = append(got, at.Unix())
			after = at
		}
		if len(got) == 0 {
			return
		}
		require.True(t, slices.IsSorted(got))
		require.Equal(t, len(got), len(slices.Compact(slices.Clone(got))), "an instant fired twice")
		// Distinct instants of the zones, enumerated zone by zone.
		hi := got[len(got)-1] + 1
		set := map[int64]bool{}
		for _, s := range singles {
			for f, ok := s.nextSec(lo); ok && f < hi; f, ok = s.nextSec(f) {
				set[f] = true
			}
		}
		require.Equal(t, int64(len(set)), m.countBetween(lo, hi))
		require.Equal(t, min(int64(len(set)), 3), m.countUpTo(lo, hi, 3))
		require.Len(t, got, len(set))
	})
}
