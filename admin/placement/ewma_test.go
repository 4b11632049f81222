package placement

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestUpdateCost(t *testing.T) {
	t.Parallel()
	nan, inf := math.NaN(), math.Inf(1)
	cases := []struct {
		name                 string
		old, measured, alpha float64
		want                 float64
	}{
		{"first measurement is taken as is", 0, 12, 0.3, 12},
		{"negative old counts as unmeasured", -1, 12, 0.3, 12},
		{"NaN old counts as unmeasured", nan, 12, 0.3, 12},
		{"EWMA", 10, 20, 0.25, 12.5},
		{"alpha 1 replaces", 10, 20, 1, 20},
		{"alpha above 1 counts as 1", 10, 20, 7, 20},
		{"alpha 0 uses the default", 10, 20, 0, 10 + DefaultAlpha*10},
		{"NaN alpha uses the default", 10, 20, nan, 10 + DefaultAlpha*10},
		{"a zero measurement is raised to MinCost", 0, 0, 0.5, MinCost},
		{"a huge measurement is capped", 0, 1e30, 0.5, MaxCost},
		{"a negative measurement is ignored", 10, -3, 0.5, 10},
		{"a NaN measurement is ignored", 10, nan, 0.5, 10},
		{"an infinite measurement is ignored", 10, inf, 0.5, 10},
		{"nothing valid gives unmeasured", nan, nan, 0.5, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			approx(t, tc.want, UpdateCost(tc.old, tc.measured, tc.alpha))
		})
	}
}

func TestUpdateSpeed(t *testing.T) {
	t.Parallel()
	nan := math.NaN()
	cases := []struct {
		name                          string
		old, predicted, actual, alpha float64
		want                          float64
	}{
		{"twice as fast as predicted", 1, 100, 50, 1, 2},
		{"EWMA", 1, 100, 50, 0.5, 1.5},
		{"slow machine", 1, 100, 250, 1, 0.4},
		{"first measurement is taken as is", 0, 100, 250, 0.5, 0.4},
		{"nothing to compare keeps the old value", 0.7, 0, 0, 0.5, 0.7},
		{"nothing valid gives the default", 0, 0, 10, 0.5, 1},
		{"NaN parts are ignored", 0.7, nan, 10, 0.5, 0.7},
		{"negative duration is ignored", 0.7, 10, -1, 0.5, 0.7},
		{"clamped above", 1, 1e9, 1e-3, 1, MaxSpeed},
		{"clamped below", 1, 1e-6, 1e6, 1, MinSpeed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			approx(t, tc.want, UpdateSpeed(tc.old, tc.predicted, tc.actual, tc.alpha))
		})
	}
}

// The measuring procedure of the package documentation converges to the
// true relative speeds once slots move between executors.
func TestMeasuringConverges(t *testing.T) {
	t.Parallel()
	s := newSim(4, 256, []float64{1.0, 0.5}, 2)
	owner := make([]int64, 256)
	for r := range 12 {
		for slot := range owner { // alternate so that every slot runs on both
			owner[slot] = int64(1 + (slot+r)%2)
		}
		s.run(owner)
	}
	require.InDelta(t, 2, s.speed[1]/s.speed[2], 0.1)
	for slot, c := range s.cost {
		// cost / speed predicts the duration on either executor within noise.
		require.InDelta(t, s.trueCost[slot], c/s.speed[1], 0.1*s.trueCost[slot], "slot %d", slot)
	}
}
