package cliflags

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"
)

// ErrUsage is returned by Parse for a command line that does not parse
// (the flag package has printed why): exit status 2. Parse's errors for a
// bad environment value or config file match it too (errors.Is) but carry
// their own message, which the command prints.
var ErrUsage = errors.New("usage")

// settingError is a bad environment value or config file: a usage error
// with a message of its own.
type settingError struct{ err error }

func (e settingError) Error() string        { return e.err.Error() }
func (e settingError) Unwrap() error        { return e.err }
func (e settingError) Is(target error) bool { return target == ErrUsage }

// Unprinted returns what a command must print of an error of Parse: the
// message of a bad environment value or config file, or "" when the flag
// package has printed it already (a bad command line, -h).
func Unprinted(err error) string {
	var se settingError
	if errors.As(err, &se) {
		return se.Error()
	}
	return ""
}

// Set is a flag set whose defaults come from the environment and the
// --config file. Create it with New; define flags with its methods; Parse.
type Set struct {
	*flag.FlagSet
	envErrs []error
	lists   []*List
	// groups are the headings of the usage (Group), seen the flags filed
	// under one so far or defined before the first.
	groups []group
	seen   map[string]bool
}

// New returns an empty Set that prints usage and errors to stderr. It
// defines --config.
func New(name string, stderr io.Writer) *Set {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	s := &Set{FlagSet: fs, seen: map[string]bool{}}
	fs.String("config", os.Getenv(EnvName("config")), "file of name = value lines setting any of these flags ('#' starts a comment; the command line wins) (env "+EnvName("config")+")")
	return s
}

// EnvName is the environment variable of a flag: SHARDJOB_ and the name
// upper-cased, dashes as underscores.
func EnvName(flagName string) string {
	return "SHARDJOB_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// env returns the environment value of a flag, if set.
func env(name string) (string, bool) { return os.LookupEnv(EnvName(name)) }

// help appends the flag's environment variable to its help text.
func help(name, text string) string { return text + " (env " + EnvName(name) + ")" }

// envErr records an environment value that does not parse.
func (s *Set) envErr(name, v, want string) {
	s.envErrs = append(s.envErrs, fmt.Errorf("%s=%q: %s", EnvName(name), v, want))
}

// Str defines a string flag.
func (s *Set) Str(name, def, text string) *string {
	if v, ok := env(name); ok {
		def = v
	}
	return s.String(name, def, help(name, text))
}

// Dur defines a duration flag.
func (s *Set) Dur(name string, def time.Duration, text string) *time.Duration {
	if v, ok := env(name); ok {
		d, err := time.ParseDuration(strings.TrimSpace(v))
		if err != nil {
			s.envErr(name, v, "use a duration such as 30s or 5m")
		}
		def = d
	}
	return s.Duration(name, def, help(name, text))
}

// Num defines an integer flag.
func (s *Set) Num(name string, def int, text string) *int {
	if v, ok := env(name); ok {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil {
			s.envErr(name, v, "use a whole number")
		}
		def = n
	}
	return s.Int(name, def, help(name, text))
}

// Flag defines a boolean flag.
func (s *Set) Flag(name string, def bool, text string) *bool {
	if v, ok := env(name); ok {
		b, err := strconv.ParseBool(strings.TrimSpace(v))
		if err != nil {
			s.envErr(name, v, "use true or false")
		}
		def = b
	}
	return s.Bool(name, def, help(name, text))
}

// List defines a flag that collects values split on sep; each use adds its
// values, but the first use in the file replaces the environment's values
// and the first use on the command line replaces both.
func (s *Set) List(name, sep, text string) *List {
	l := &List{sep: sep}
	if v, ok := env(name); ok {
		_ = l.Set(v)
	}
	s.Var(l, name, help(name, text))
	s.lists = append(s.lists, l)
	return l
}

// Parse applies the --config file (named on the command line or by
// SHARDJOB_CONFIG), then the command line. It returns flag.ErrHelp for -h,
// ErrUsage for a command line that does not parse or has arguments left
// over (the flag package printed why), and for a bad environment value or
// file an error that matches ErrUsage and names the variable or the
// file's line.
func (s *Set) Parse(args []string) error {
	if len(s.envErrs) > 0 {
		return settingError{errors.Join(s.envErrs...)}
	}
	s.replaceLists()
	if path := configPath(args); path != "" {
		if err := s.applyFile(path); err != nil {
			return settingError{fmt.Errorf("--config %s: %w", path, err)}
		}
	}
	s.replaceLists()
	if err := s.FlagSet.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return ErrUsage
	}
	if s.NArg() > 0 {
		fmt.Fprintf(s.Output(), "unexpected arguments: %v\n", s.Args())
		return ErrUsage
	}
	return nil
}

func (s *Set) replaceLists() {
	for _, l := range s.lists {
		l.replace = len(l.Vals) > 0
	}
}

// configPath finds --config in args (or SHARDJOB_CONFIG) before the flags
// are parsed, so that the file can supply values the command line
// overrides.
func configPath(args []string) string {
	path := os.Getenv(EnvName("config"))
	for i, a := range args {
		if a == "--" {
			break
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || name != "config" {
			continue
		}
		if hasValue {
			path = value
		} else if i+1 < len(args) {
			path = args[i+1]
		}
	}
	return path
}

// applyFile sets flags from "name = value" lines; '#' starts a comment.
func (s *Set) applyFile(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	for n, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, value, ok := strings.Cut(line, "=")
		name, value = strings.TrimSpace(name), strings.TrimSpace(value)
		if !ok || name == "" {
			return fmt.Errorf("line %d: want name = value", n+1)
		}
		if name == "config" || s.Lookup(name) == nil {
			return fmt.Errorf("line %d: unknown setting %q (run with -h for the list)", n+1, name)
		}
		if err := s.Set(name, value); err != nil {
			return fmt.Errorf("line %d: %s: %w", n+1, name, err)
		}
	}
	return nil
}

// List is a flag of several values (Set.List).
type List struct {
	sep     string
	Vals    []string
	replace bool
}

func (l *List) String() string {
	if l == nil {
		return ""
	}
	return strings.Join(l.Vals, l.sep)
}

// Set adds the values of v (split on the separator), first dropping the
// values of an earlier source.
func (l *List) Set(v string) error {
	if l.replace {
		l.Vals, l.replace = nil, false
	}
	for _, part := range strings.Split(v, l.sep) {
		if part = strings.TrimSpace(part); part != "" {
			l.Vals = append(l.Vals, part)
		}
	}
	return nil
}

// NewLogger returns a logger writing to w in format (text or json) from
// level (debug, info, warn or error) on; the errors name the flags.
func NewLogger(w io.Writer, format, level string) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level %q: use debug, info, warn or error", level)
	}
	opts := &slog.HandlerOptions{Level: lv}
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("--log-format %q: use text or json", format)
}
