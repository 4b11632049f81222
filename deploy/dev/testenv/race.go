//go:build race

package testenv

// raceEnabled reports whether the test binary was built with -race;
// BuildBinary then builds with -race too.
const raceEnabled = true
