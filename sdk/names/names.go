// Package names holds the one rule for the names of shardjob's objects —
// apps, jobs, users, the executors' data sources — so that a name valid in
// one place is valid in every other.
package names

import (
	"regexp"
	"strconv"
)

// Rule says what Valid accepts, for error messages.
const Rule = "1-64 ASCII letters (a-z, A-Z), digits, '.', '_' or '-', starting with a letter or digit (no spaces)"

var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// Valid reports whether s follows Rule.
func Valid(s string) bool { return nameRE.MatchString(s) }

// Problem says what is wrong with s as a name, "" when it is valid:
// "required; " and Rule for an empty name, else s quoted, "is not a valid
// name: use " and Rule, so that a name that was given is not called
// missing.
func Problem(s string) string {
	switch {
	case Valid(s):
		return ""
	case s == "":
		return "required; " + Rule
	default:
		return strconv.Quote(s) + " is not a valid name: use " + Rule
	}
}
