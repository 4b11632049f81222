// Package names holds the one rule for the names of shardjob's objects —
// apps, jobs, users, the executors' data sources — so that a name valid in
// one place is valid in every other.
package names

import "regexp"

// Rule says what Valid accepts, for error messages.
const Rule = "1-64 letters, digits, '.', '_' or '-', starting with a letter or digit"

var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// Valid reports whether s follows Rule.
func Valid(s string) bool { return nameRE.MatchString(s) }
