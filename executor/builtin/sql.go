package builtin

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"

	"github.com/shardjob/shardjob/sdk"
	"github.com/shardjob/shardjob/sdk/names"
)

// DataSource is a database the sql handler may run statements against.
type DataSource struct {
	Driver string // "mysql" (MySQL, MariaDB), "postgres" (PostgreSQL) or "sqlite"
	DSN    string // go-sql-driver/mysql DSN, PostgreSQL URL or key=value DSN (pgx), or modernc.org/sqlite file name / URI
}

// SQLConfig configures the sql handler.
type SQLConfig struct {
	// DataSources are the databases jobs may name, by name (flag
	// --sql-datasource name=driver:dsn). Default: none, every statement is
	// refused. The platform database is not one unless listed here.
	// multiStatements is turned off in MySQL DSNs: one job, one statement.
	// PostgreSQL statements run through the extended query protocol, which
	// takes one statement only (see execPostgres).
	// SQLite data sources are opened in defensive mode by a driver of the
	// handler's own whose connections attach no database and refuse most
	// PRAGMAs (see openSQLite); _defensive=0 in their DSN is an error.
	DataSources map[string]DataSource

	// DefaultTimeout bounds a statement whose params give no timeout_ms
	// (default 5 minutes); MaxTimeout is the largest timeout_ms accepted at
	// run time (default 1 hour, the largest ValidateParams accepts).
	DefaultTimeout time.Duration
	MaxTimeout     time.Duration
}

const sqlMaxTimeout = time.Hour

// ParseDataSource parses the flag form "name=driver:dsn", e.g.
// "billing=mysql:app:secret@tcp(db:3306)/billing",
// "ledger=postgres:postgres://app:secret@db:5432/ledger?sslmode=require" or
// "cache=sqlite:/var/lib/shardjob/cache.db".
func ParseDataSource(spec string) (string, DataSource, error) {
	name, rest, ok := strings.Cut(strings.TrimSpace(spec), "=")
	drv, dsn, ok2 := strings.Cut(rest, ":")
	if !ok || !ok2 {
		return "", DataSource{}, fmt.Errorf("sql data source %q: want name=driver:dsn, e.g. billing=mysql:user:pass@tcp(db:3306)/billing, ledger=postgres:postgres://user:pass@db:5432/ledger or cache=sqlite:/var/lib/cache.db", redactSpec(spec))
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
		db, err := openDataSource(name, cfg.DataSources[name])
		if err != nil {
			_ = s.Close()
			return nil, err
		}
		db.SetConnMaxIdleTime(5 * time.Minute)
		s.dbs[name] = db
	}
	return s, nil
}

// openDataSource checks ds and opens (lazily) its pool: MySQL with
// multiStatements off, PostgreSQL as openPostgres sets it up, SQLite with
// the guards of openSQLite.
func openDataSource(name string, ds DataSource) (*sql.DB, error) {
	if !names.Valid(name) {
		return nil, fmt.Errorf("sql data source %q: name must be %s", name, names.Rule)
	}
	switch ds.Driver {
	case "mysql":
		mc, err := mysql.ParseDSN(ds.DSN)
		if err != nil {
			return nil, fmt.Errorf("sql data source %q: not a go-sql-driver/mysql DSN (user:pass@tcp(host:3306)/db): %v", name, err)
		}
		mc.MultiStatements = false
		db, err := sql.Open("mysql", mc.FormatDSN())
		if err != nil {
			return nil, fmt.Errorf("sql data source %q: %w", name, err)
		}
		return db, nil
	case "postgres":
		db, err := openPostgres(ds.DSN)
		if err != nil {
			return nil, fmt.Errorf("sql data source %q: %w", name, err)
		}
		return db, nil
	case "sqlite":
		db, err := openSQLite(ds.DSN)
		if err != nil {
			return nil, fmt.Errorf("sql data source %q: %w", name, err)
		}
		return db, nil
	}
	return nil, fmt.Errorf("sql data source %q: driver %q: use mysql (MySQL, MariaDB), postgres (PostgreSQL) or sqlite", name, ds.Driver)
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
	compiled string   // the statement with every ? and :name turned into the driver's placeholder
	refs     []argRef // what each placeholder of compiled binds, in order
	args     []any    // Args, converted
	named    map[string]any
}

// argRef is one placeholder: a positional ? (index into Args) or a :name.
type argRef struct {
	pos  int
	name string
}

// The names a statement may use without defining them in "named".
// The workflow context's (business_date, workflow_run_id, workflow_node)
// are NULL for a run that is no workflow node's.
var sqlTaskNames = map[string]bool{"slot": true, "total": true, "run_id": true, "job_id": true, "attempt": true, "token": true,
	"business_date": true, "workflow_run_id": true, "workflow_node": true}

// sqlDialects are the dialects a statement is checked for when its data
// source's is not known, in the order of the sql.dialects problem.
var sqlDialects = []dialect{dialectMySQL, dialectSQLite, dialectPostgres}

// validateSQLParams is ValidateParams for the sql handler. The admin does
// not know the dialect of a data source, which is configured on the
// executors: params pass when the statement is valid for MySQL, SQLite or
// PostgreSQL, and the executor compiles it again for its data source. When
// it is valid for none, the error says what is wrong for each (once, when
// the three say the same).
func validateSQLParams(params string) error {
	p, err := decodeSQLParams(params)
	if err != nil {
		return err
	}
	errs := make([]error, len(sqlDialects))
	for i, d := range sqlDialects {
		if errs[i] = p.compile(d); errs[i] == nil {
			return nil
		}
	}
	same := true
	pes := make([]*ParamsError, len(errs))
	for i, err := range errs {
		same = same && err.Error() == errs[0].Error()
		if !errors.As(err, &pes[i]) {
			return errs[0]
		}
	}
	if same {
		return errs[0]
	}
	field := pes[0].Field
	for _, pe := range pes {
		if pe.Field != field {
			field = ""
		}
	}
	return paramsErr(NameSQL, field, "sql.dialects", "mysql", pes[0], "sqlite", pes[1], "postgres", pes[2])
}

// decodeSQLParams decodes and checks params, all but the statement's text.
func decodeSQLParams(params string) (*sqlParams, error) {
	var p sqlParams
	if err := decodeParams(NameSQL, params, &p); err != nil {
		return nil, err
	}
	if !names.Valid(p.DataSource) {
		return nil, paramsErr(NameSQL, "datasource", "sql.datasource")
	}
	if strings.TrimSpace(p.Statement) == "" {
		return nil, paramsErr(NameSQL, "statement", "sql.statement_required")
	}
	for i, a := range p.Args {
		v, err := sqlValue(a)
		if err != nil {
			return nil, paramsErrFrom(NameSQL, fmt.Sprintf("args[%d]", i), err)
		}
		p.args = append(p.args, v)
	}
	p.named = map[string]any{}
	for k, a := range p.Named {
		if sqlTaskNames[k] {
			return nil, paramsErr(NameSQL, "named", "sql.task_name", "name", strconv.Quote(k), "key", k)
		}
		v, err := sqlValue(a)
		if err != nil {
			return nil, paramsErrFrom(NameSQL, "named."+k, err)
		}
		p.named[k] = v
	}
	var err error
	if p.timeout, err = timeoutParam(NameSQL, p.TimeoutMS, 0, sqlMaxTimeout); err != nil {
		return nil, err
	}
	return &p, nil
}

// compile reads the statement in dialect d (compileStatement) and checks
// its placeholders against args and named.
func (p *sqlParams) compile(d dialect) error {
	var err error
	p.compiled, p.refs, err = compileStatement(p.Statement, d)
	if err != nil {
		return paramsErrFrom(NameSQL, "statement", err)
	}
	positional, used := 0, map[string]bool{}
	for _, r := range p.refs {
		if r.name == "" {
			positional++
			continue
		}
		used[r.name] = true
		if _, ok := p.named[r.name]; !ok && !sqlTaskNames[r.name] {
			return paramsErr(NameSQL, "statement", "sql.unknown_name", "key", r.name)
		}
	}
	if positional != len(p.args) {
		return paramsErr(NameSQL, "args", "sql.args_count", "placeholders", positional, "values", len(p.args))
	}
	for _, k := range sortedAnyKeys(p.Named) {
		if !used[k] {
			return paramsErr(NameSQL, "named", "sql.named_unused", "name", strconv.Quote(k), "key", k)
		}
	}
	return nil
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
			return nil, newProblem("sql.number_range", nil, "value", v)
		}
		return f, nil
	default:
		return nil, newProblem("sql.value_type", nil, "type", jsonTypeOf(v))
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
			args = append(args, int64(t.SlotCount))
		case "run_id":
			args = append(args, t.RunID)
		case "job_id":
			args = append(args, t.JobID)
		case "attempt":
			args = append(args, int64(t.Attempt))
		case "token":
			args = append(args, t.Token)
		case "business_date", "workflow_run_id", "workflow_node":
			args = append(args, workflowArg(t, r.name))
		default:
			args = append(args, p.named[r.name])
		}
	}
	return args
}

// workflowArg is the value of a workflow context's name for a statement:
// nil (NULL) for a run that is no workflow node's.
func workflowArg(t *sdk.Task, name string) any {
	if t.Workflow == nil {
		return nil
	}
	switch name {
	case "business_date":
		return t.Workflow.BusinessDate
	case "workflow_run_id":
		return t.Workflow.RunID
	default:
		return t.Workflow.Node
	}
}

// Handle runs the statement of the task's params.
func (s *SQL) Handle(ctx context.Context, t *sdk.Task) error {
	p, err := decodeSQLParams(t.Params)
	if err != nil {
		return err
	}
	if _, ok := s.dbs[p.DataSource]; !ok {
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
	if err := p.compile(s.dialect(p.DataSource)); err != nil {
		return err
	}
	timeout := p.timeout
	if timeout == 0 {
		timeout = s.cfg.DefaultTimeout
	}
	if timeout > s.cfg.MaxTimeout {
		return paramsErr(NameSQL, "timeout_ms", "params.timeout_executor", "value", p.TimeoutMS, "max", s.cfg.MaxTimeout)
	}
	sctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := time.Now()
	res, err := s.exec(sctx, p.DataSource, p.compiled, p.bind(t))
	if err != nil {
		switch {
		case ctx.Err() != nil:
			return fmt.Errorf("sql on %s: %w", p.DataSource, ctx.Err())
		case sctx.Err() != nil:
			return retryable("sql on %s: not done within timeout %s", p.DataSource, timeout)
		case transientSQLError(err):
			return &RetryableError{Err: fmt.Errorf("sql on %s: %w", p.DataSource, err)}
		case permanentSQLError(err):
			return permanent("sql on %s: %w", p.DataSource, err)
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
		"duration", time.Since(start).Round(time.Millisecond).String())
	return nil
}

// dialect is the dialect of the data source name.
func (s *SQL) dialect(name string) dialect { return dialect(s.cfg.DataSources[name].Driver) }

// exec runs stmt, compiled for the dialect of the data source name, on it:
// on MySQL as it is (multiStatements is off), on PostgreSQL and SQLite with
// the guards of execPostgres and execSQLite.
func (s *SQL) exec(ctx context.Context, name, stmt string, args []any) (sql.Result, error) {
	switch s.dialect(name) {
	case dialectSQLite:
		return execSQLite(ctx, s.dbs[name], stmt, args)
	case dialectPostgres:
		return execPostgres(ctx, s.dbs[name], stmt, args)
	}
	return s.dbs[name].ExecContext(ctx, stmt, args...)
}

// permanentMySQL are the MySQL/MariaDB error numbers that no retry can fix
// (docs/failures.md): the statement, the grants or the data are wrong.
var permanentMySQL = map[uint16]bool{
	// syntax and schema
	1064: true, // ER_PARSE_ERROR: syntax error
	1149: true, // ER_SYNTAX_ERROR
	1054: true, // ER_BAD_FIELD_ERROR: unknown column
	1146: true, // ER_NO_SUCH_TABLE
	1136: true, // ER_WRONG_VALUE_COUNT_ON_ROW
	// permission
	1044: true, // ER_DBACCESS_DENIED_ERROR
	1045: true, // ER_ACCESS_DENIED_ERROR
	1142: true, // ER_TABLEACCESS_DENIED_ERROR
	1143: true, // ER_COLUMNACCESS_DENIED_ERROR
	1227: true, // ER_SPECIFIC_ACCESS_DENIED_ERROR
	1370: true, // ER_PROCACCESS_DENIED_ERROR
	// constraints and data
	1062: true, // ER_DUP_ENTRY
	1586: true, // ER_DUP_ENTRY_WITH_KEY_NAME
	1451: true, // ER_ROW_IS_REFERENCED_2: foreign key (parent row)
	1452: true, // ER_NO_REFERENCED_ROW_2: foreign key (child row)
	1048: true, // ER_BAD_NULL_ERROR
	1364: true, // ER_NO_DEFAULT_FOR_FIELD
	1406: true, // ER_DATA_TOO_LONG
	1264: true, // ER_WARN_DATA_OUT_OF_RANGE
	1366: true, // ER_TRUNCATED_WRONG_VALUE_FOR_FIELD
	3819: true, // ER_CHECK_CONSTRAINT_VIOLATED (MySQL)
	4025: true, // ER_CONSTRAINT_FAILED (MariaDB CHECK)
}

// permanentPostgres are the SQLSTATE classes (the first two characters of
// the code) of the PostgreSQL errors that no retry can fix
// (docs/failures.md), as permanentMySQL.
var permanentPostgres = map[string]bool{
	"22": true, // data exception: value too long, out of range, invalid text representation
	"23": true, // integrity constraint violation: unique, not null, foreign key, check
	"28": true, // invalid authorization specification: the role may not log in
	"42": true, // syntax error or access rule violation: syntax, no such table or column, no privilege
	"44": true, // with check option violation
}

// transientPostgres are the SQLSTATE codes of the PostgreSQL errors worth
// retrying, besides class 08 (connection exception).
var transientPostgres = map[string]bool{
	"40001": true, // serialization_failure
	"40P01": true, // deadlock_detected
	"55P03": true, // lock_not_available: lock_timeout, NOWAIT
	"57P01": true, // admin_shutdown
	"57P02": true, // crash_shutdown
	"57P03": true, // cannot_connect_now: the server is starting
}

// permanentSQLError reports errors no retry can fix: syntax and schema,
// permission, constraint and data errors (permanentMySQL; on PostgreSQL
// the SQLSTATE classes of permanentPostgres; on SQLite SQLITE_ERROR —
// syntax, no such table or column —, SQLITE_CONSTRAINT, SQLITE_MISMATCH
// and SQLITE_AUTH).
func permanentSQLError(err error) bool {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return permanentMySQL[me.Number]
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return len(pe.Code) == 5 && permanentPostgres[pe.Code[:2]]
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case 1, 19, 20, 23: // SQLITE_ERROR, SQLITE_CONSTRAINT, SQLITE_MISMATCH, SQLITE_AUTH
			return true
		}
	}
	return false
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
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return transientPostgres[pe.Code] || strings.HasPrefix(pe.Code, "08")
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
