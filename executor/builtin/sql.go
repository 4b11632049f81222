package builtin

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
	"modernc.org/sqlite" // registers the "sqlite" driver

	"github.com/shardjob/shardjob/sdk"
)

// DataSource is a database the sql handler may run statements against.
type DataSource struct {
	Driver string // "mysql" (MySQL, MariaDB) or "sqlite"
	DSN    string // go-sql-driver/mysql DSN, or a modernc.org/sqlite file name / URI
}

// SQLConfig configures the sql handler.
type SQLConfig struct {
	// DataSources are the databases jobs may name, by name (flag
	// --sql-datasource name=driver:dsn). Default: none, every statement is
	// refused. The platform database is not one unless listed here.
	// multiStatements is turned off in MySQL DSNs: one job, one statement.
	DataSources map[string]DataSource

	// DefaultTimeout bounds a statement whose params give no timeout_ms
	// (default 5 minutes); MaxTimeout is the largest timeout_ms accepted at
	// run time (default 1 hour, the largest ValidateParams accepts).
	DefaultTimeout time.Duration
	MaxTimeout     time.Duration
}

const sqlMaxTimeout = time.Hour

var dataSourceNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// ParseDataSource parses the flag form "name=driver:dsn", e.g.
// "billing=mysql:app:secret@tcp(db:3306)/billing" or
// "cache=sqlite:/var/lib/shardjob/cache.db".
func ParseDataSource(spec string) (string, DataSource, error) {
	name, rest, ok := strings.Cut(strings.TrimSpace(spec), "=")
	drv, dsn, ok2 := strings.Cut(rest, ":")
	if !ok || !ok2 {
		return "", DataSource{}, fmt.Errorf("sql data source %q: want name=driver:dsn, e.g. billing=mysql:user:pass@tcp(db:3306)/billing or cache=sqlite:/var/lib/cache.db", redactSpec(spec))
	}
	return strings.TrimSpace(name), DataSource{Driver: strings.TrimSpace(drv), DSN: dsn}, nil
}

// redactSpec hides what follows the driver (a DSN may hold a password).
func redactSpec(spec string) string {
	if name, rest, ok := strings.Cut(spec, "="); ok {
		if drv, _, ok := strings.Cut(rest, ":"); ok {
			return name + "=" + drv + ":…"
		}
		return name + "=…"
	}
	return spec
}

// SQL is the sql handler: one parameterised statement per slot, see
// docs/builtin-handlers.md.
type SQL struct {
	cfg SQLConfig
	dbs map[string]*sql.DB
}

// NewSQL checks cfg and opens (lazily: no connection yet) a pool per data
// source. Close closes them.
func NewSQL(cfg SQLConfig) (*SQL, error) {
	if cfg.DefaultTimeout <= 0 {
		cfg.DefaultTimeout = 5 * time.Minute
	}
	if cfg.MaxTimeout <= 0 {
		cfg.MaxTimeout = sqlMaxTimeout
	}
	s := &SQL{cfg: cfg, dbs: map[string]*sql.DB{}}
	names := make([]string, 0, len(cfg.DataSources))
	for n := range cfg.DataSources {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		ds := cfg.DataSources[name]
		if !dataSourceNameRE.MatchString(name) {
			_ = s.Close()
			return nil, fmt.Errorf("sql data source %q: name must be 1-64 letters, digits, '.', '_' or '-'", name)
		}
		dsn := ds.DSN
		switch ds.Driver {
		case "mysql":
			mc, err := mysql.ParseDSN(dsn)
			if err != nil {
				_ = s.Close()
				return nil, fmt.Errorf("sql data source %q: not a go-sql-driver/mysql DSN (user:pass@tcp(host:3306)/db): %v", name, err)
			}
			mc.MultiStatements = false
			dsn = mc.FormatDSN()
		case "sqlite":
			if strings.TrimSpace(dsn) == "" {
				_ = s.Close()
				return nil, fmt.Errorf("sql data source %q: sqlite needs a file name", name)
			}
		default:
			_ = s.Close()
			return nil, fmt.Errorf("sql data source %q: driver %q: use mysql (MySQL, MariaDB) or sqlite", name, ds.Driver)
		}
		db, err := sql.Open(ds.Driver, dsn)
		if err != nil {
			_ = s.Close()
			return nil, fmt.Errorf("sql data source %q: %w", name, err)
		}
		db.SetConnMaxIdleTime(5 * time.Minute)
		s.dbs[name] = db
	}
	return s, nil
}

// Close closes the data sources' pools.
func (s *SQL) Close() error {
	var errs []error
	for _, db := range s.dbs {
		errs = append(errs, db.Close())
	}
	return errors.Join(errs...)
}

// sqlParams is the JSON params of the sql handler.
type sqlParams struct {
	DataSource string         `json:"datasource"`
	Statement  string         `json:"statement"`
	Args       []any          `json:"args"`
	Named      map[string]any `json:"named"`
	TimeoutMS  int64          `json:"timeout_ms"`

	timeout  time.Duration
	compiled string   // the statement with every :name turned into ?
	refs     []argRef // what each ? of compiled binds, in order
	args     []any    // Args, converted
	named    map[string]any
}

// argRef is one placeholder: a positional ? (index into Args) or a :name.
type argRef struct {
	pos  int
	name string
}

// The names a statement may use without defining them in "named".
var sqlTaskNames = map[string]bool{"slot": true, "total": true, "run_id": true, "job_id": true, "attempt": true, "token": true}

func parseSQLParams(params string) (*sqlParams, error) {
	var p sqlParams
	if err := decodeParams(NameSQL, params, &p); err != nil {
		return nil, err
	}
	if !dataSourceNameRE.MatchString(p.DataSource) {
		return nil, paramsErr(NameSQL, "datasource", "required: the name of a data source configured on the executors (--sql-datasource name=driver:dsn)")
	}
	if strings.TrimSpace(p.Statement) == "" {
		return nil, paramsErr(NameSQL, "statement", "required, e.g. \"UPDATE invoice SET state = ? WHERE MOD(id, :total) = :slot\"")
	}
	var err error
	p.compiled, p.refs, err = compileStatement(p.Statement)
	if err != nil {
		return nil, paramsErr(NameSQL, "statement", "%s", err.Error())
	}
	for i, a := range p.Args {
		v, err := sqlValue(a)
		if err != nil {
			return nil, paramsErr(NameSQL, fmt.Sprintf("args[%d]", i), "%s", err.Error())
		}
		p.args = append(p.args, v)
	}
	p.named = map[string]any{}
	for k, a := range p.Named {
		if sqlTaskNames[k] {
			return nil, paramsErr(NameSQL, "named", "%q is set by the handler (the task's %s); pick another name", k, k)
		}
		v, err := sqlValue(a)
		if err != nil {
			return nil, paramsErr(NameSQL, "named."+k, "%s", err.Error())
		}
		p.named[k] = v
	}
	positional, used := 0, map[string]bool{}
	for _, r := range p.refs {
		if r.name == "" {
			positional++
			continue
		}
		used[r.name] = true
		if _, ok := p.named[r.name]; !ok && !sqlTaskNames[r.name] {
			return nil, paramsErr(NameSQL, "statement", ":%s is neither a task value (:slot, :total, :run_id, :job_id, :attempt, :token) nor a key of \"named\"", r.name)
		}
	}
	if positional != len(p.args) {
		return nil, paramsErr(NameSQL, "args", "the statement has %d ? placeholders but args has %d values", positional, len(p.args))
	}
	for _, k := range sortedAnyKeys(p.Named) {
		if !used[k] {
			return nil, paramsErr(NameSQL, "named", "%q is not used by the statement (no :%s in it)", k, k)
		}
	}
	if p.timeout, err = timeoutParam(NameSQL, p.TimeoutMS, 0, sqlMaxTimeout); err != nil {
		return nil, err
	}
	return &p, nil
}

func sortedAnyKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// sqlValue converts a decoded JSON value into an argument: strings, bools
// and null as they are, integral numbers as int64, other numbers as float64.
func sqlValue(v any) (any, error) {
	switch v := v.(type) {
	case nil, string, bool:
		return v, nil
	case json.Number:
		if n, err := strconv.ParseInt(v.String(), 10, 64); err == nil {
			return n, nil
		}
		f, err := strconv.ParseFloat(v.String(), 64)
		if err != nil {
			return nil, fmt.Errorf("%s: number out of range", v)
		}
		return f, nil
	default:
		return nil, fmt.Errorf("want a string, number, boolean or null, not a JSON %s", jsonTypeOf(v))
	}
}

func jsonTypeOf(v any) string {
	switch v.(type) {
	case []any:
		return "array"
	case map[string]any:
		return "object"
	default:
		return fmt.Sprintf("%T", v)
	}
}

// compileStatement finds the placeholders of stmt — ? and :name — outside
// string literals, quoted identifiers and comments, turns every :name into
// ?, and refuses more than one statement. It never puts a value into the
// text: values are bound by the driver.
func compileStatement(stmt string) (string, []argRef, error) {
	var out strings.Builder
	var refs []argRef
	positional := 0
	s := strings.TrimSpace(stmt)
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\'' || c == '"' || c == '`':
			j, err := skipQuoted(s, i)
			if err != nil {
				return "", nil, err
			}
			out.WriteString(s[i:j])
			i = j
		case c == '-' && strings.HasPrefix(s[i:], "--"):
			j := strings.IndexByte(s[i:], '\n')
			if j < 0 {
				j = len(s) - i
			}
			out.WriteString(s[i : i+j])
			i += j
		case c == '/' && strings.HasPrefix(s[i:], "/*"):
			j := strings.Index(s[i+2:], "*/")
			if j < 0 {
				return "", nil, errors.New("a /* comment is not closed")
			}
			out.WriteString(s[i : i+2+j+2])
			i += 2 + j + 2
		case c == '?':
			if i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '9' {
				return "", nil, fmt.Errorf("numbered placeholders (?%c…) are not supported: use ? or :name", s[i+1])
			}
			refs = append(refs, argRef{pos: positional})
			positional++
			out.WriteByte('?')
			i++
		case c == ':' && i+1 < len(s) && isNameStart(s[i+1]) && (i == 0 || s[i-1] != ':'):
			j := i + 1
			for j < len(s) && isNameChar(s[j]) {
				j++
			}
			refs = append(refs, argRef{name: s[i+1 : j]})
			out.WriteByte('?')
			i = j
		case c == ';':
			rest := strings.TrimSpace(s[i+1:])
			if rest != "" {
				return "", nil, errors.New("one statement only: text follows the ';'")
			}
			i = len(s)
		default:
			out.WriteByte(c)
			i++
		}
	}
	compiled := strings.TrimSpace(out.String())
	if compiled == "" {
		return "", nil, errors.New("empty statement")
	}
	return compiled, refs, nil
}

// skipQuoted returns the index just past the quoted text starting at s[i]:
// a doubled quote stands for itself, a backslash escapes the next byte
// (MySQL's reading; keep backslashes out of literals for SQLite, or pass the
// value as an argument).
func skipQuoted(s string, i int) (int, error) {
	q := s[i]
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			if q != '`' {
				j++
			}
		case q:
			if j+1 < len(s) && s[j+1] == q {
				j++
				continue
			}
			return j + 1, nil
		}
	}
	return 0, fmt.Errorf("the %c quote at byte %d is not closed", q, i)
}

func isNameStart(c byte) bool { return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isNameChar(c byte) bool  { return isNameStart(c) || c >= '0' && c <= '9' }

// bind returns the arguments of compiled for the task, in order.
func (p *sqlParams) bind(t *sdk.Task) []any {
	args := make([]any, 0, len(p.refs))
	for _, r := range p.refs {
		if r.name == "" {
			args = append(args, p.args[r.pos])
			continue
		}
		switch r.name {
		case "slot":
			args = append(args, int64(t.Slot))
		case "total":
			args = append(args, int64(t.Total))
		case "run_id":
			args = append(args, t.RunID)
		case "job_id":
			args = append(args, t.JobID)
		case "attempt":
			args = append(args, int64(t.Attempt))
		case "token":
			args = append(args, t.Token)
		default:
			args = append(args, p.named[r.name])
		}
	}
	return args
}

// Handle runs the statement of the task's params.
func (s *SQL) Handle(ctx context.Context, t *sdk.Task) error {
	p, err := parseSQLParams(t.Params)
	if err != nil {
		return err
	}
	db, ok := s.dbs[p.DataSource]
	if !ok {
		names := make([]string, 0, len(s.dbs))
		for n := range s.dbs {
			names = append(names, n)
		}
		sort.Strings(names)
		have := "none"
		if len(names) > 0 {
			have = strings.Join(names, ", ")
		}
		return refused("sql data source %q is not configured on this executor (configured: %s); add --sql-datasource %s=driver:dsn", p.DataSource, have, p.DataSource)
	}
	timeout := p.timeout
	if timeout == 0 {
		timeout = s.cfg.DefaultTimeout
	}
	if timeout > s.cfg.MaxTimeout {
		return paramsErr(NameSQL, "timeout_ms", "%d ms exceeds this executor's maximum of %s", p.TimeoutMS, s.cfg.MaxTimeout)
	}
	sctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := time.Now()
	res, err := db.ExecContext(sctx, p.compiled, p.bind(t)...)
	if err != nil {
		switch {
		case ctx.Err() != nil:
			return fmt.Errorf("sql on %s: %w", p.DataSource, ctx.Err())
		case sctx.Err() != nil:
			return retryable("sql on %s: not done within timeout %s", p.DataSource, timeout)
		case transientSQLError(err):
			return &RetryableError{Err: fmt.Errorf("sql on %s: %w", p.DataSource, err)}
		}
		return fmt.Errorf("sql on %s: %w", p.DataSource, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		n = -1 // not supported by the driver; still a success
	}
	if n >= 0 {
		t.AddProcessed(n)
		t.Progress(n, 0)
	}
	logger(t).Info("sql statement executed", "datasource", p.DataSource, "rows_affected", n,
		"duration", time.Since(start).Round(time.Millisecond))
	return nil
}

// transientSQLError reports errors worth retrying: deadlocks, lock waits,
// busy SQLite files, lost connections.
func transientSQLError(err error) bool {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		switch me.Number {
		case 1205, 1213, 2006, 2013: // lock wait timeout, deadlock, gone away, lost connection
			return true
		}
		return false
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case 5, 6: // SQLITE_BUSY, SQLITE_LOCKED
			return true
		}
		return false
	}
	return errors.Is(err, driver.ErrBadConn) || errors.Is(err, mysql.ErrInvalidConn)
}
