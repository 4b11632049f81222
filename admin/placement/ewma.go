package placement

import "math"

// Smoothing of the measurements that feed Balance.
const (
	// DefaultAlpha is the EWMA weight of a new measurement used when the
	// alpha given to UpdateCost or UpdateSpeed is not in (0, 1].
	DefaultAlpha = 0.5
	// MinCost is the smallest cost UpdateCost returns for a valid
	// measurement (1 ms), so that a measured slot never reads as "never
	// measured" (a cost of 0).
	MinCost = 1e-3
	// MinSpeed and MaxSpeed bound UpdateSpeed: one odd run must not make an
	// executor look useless or infinitely fast.
	MinSpeed = 1e-3
	MaxSpeed = 1e3
)

// UpdateCost folds a measured slot cost into its EWMA:
// old + alpha × (measured − old). The measurement is the slot's duration in
// seconds times the speed of the executor that ran it, so that the cost
// stays "seconds on a speed-1 executor". When old is not a positive finite
// number (never measured) the measurement is returned as is. A measurement
// that is negative or not finite is ignored (old is returned, or 0 when old
// is not valid either); a valid one is clamped to [MinCost, MaxCost]. alpha
// above 1 counts as 1; alpha not above 0 (or NaN) as DefaultAlpha.
func UpdateCost(old, measured, alpha float64) float64 {
	if !(measured >= 0) || math.IsInf(measured, 1) {
		return validOr(old, 0)
	}
	measured = min(max(measured, MinCost), MaxCost)
	if validOr(old, 0) == 0 {
		return measured
	}
	return old + normAlpha(alpha)*(measured-old)
}

// UpdateSpeed folds one speed measurement of an executor into its EWMA. The
// measurement is predictedCost / actualSeconds: the predicted costs of slots
// the executor ran, before this run's UpdateCost, over the seconds they
// actually took. Call it once per executor and run with the sums over its
// slots rather than once per slot, and leave out the slots whose cost was
// last measured on this same executor: their ratio only echoes the current
// estimate (see the package documentation). When old is not a positive
// finite number the measurement is returned as is. A measurement whose
// parts are not positive finite numbers is ignored (old is returned, or 1
// when old is not valid either). The result is clamped to
// [MinSpeed, MaxSpeed]. alpha is read as in UpdateCost.
func UpdateSpeed(old, predictedCost, actualSeconds, alpha float64) float64 {
	if validOr(predictedCost, 0) == 0 || validOr(actualSeconds, 0) == 0 {
		return validOr(old, 1)
	}
	sample := predictedCost / actualSeconds
	v := sample
	if validOr(old, 0) != 0 {
		v = old + normAlpha(alpha)*(sample-old)
	}
	return min(max(v, MinSpeed), MaxSpeed)
}

func normAlpha(alpha float64) float64 {
	switch {
	case !(alpha > 0):
		return DefaultAlpha
	case alpha > 1:
		return 1
	}
	return alpha
}
