package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	sqlfiles "github.com/shardjob/shardjob/sql"
	"github.com/shardjob/shardjob/sql/namedsql"
)

// copyTables are the tables of an installation that Copy moves, each with
// the key its rows are read in order of (its primary key). Every table of
// the schema but schema_migrations is here (TestCopyTablesAreTheSchema);
// leader, the one row the migrations create, is copied by CopyLeader.
var copyTables = []struct {
	name string
	key  []string
}{
	{"app", []string{"name"}},
	{"app_job_count", []string{"app"}},
	{"app_log_day", []string{"app", "day"}},
	{"app_user", []string{"id"}},
	{"user_session", []string{"token_hash"}},
	{"sso_login", []string{"state_hash"}},
	{"api_token", []string{"id"}},
	{"audit_log", []string{"id"}},
	{"business_calendar", []string{"id"}},
	{"executor", []string{"id"}},
	{"executor_nonce", []string{"nonce"}},
	{"job", []string{"id"}},
	{"job_alarm_route", []string{"job_id", "channel", "recipient"}},
	{"job_audit", []string{"job_id"}},
	{"job_backfill", []string{"id"}},
	{"job_breaker", []string{"job_id"}},
	{"scheduler_partition", []string{"id"}},
	{"installation_setting", []string{"name"}},
	{"job_run", []string{"id"}},
	{"slot_attempt", []string{"id"}},
	{"slot_stats", []string{"job_id", "slot"}},
	{"slot_replay_params", []string{"run_id", "slot"}},
	{"dead_letter", []string{"id"}},
	{"run_log", []string{"run_id", "seq"}},
	{"run_log_state", []string{"run_id"}},
	{"run_stat_cursor", []string{"id"}},
	{"run_stat_minute", []string{"minute", "app"}},
	{"run_stat_minute_all", []string{"minute"}},
	{"utilization_sample", []string{"id"}},
	{"alarm_event_group", []string{"id"}},
	{"alarm_event", []string{"id"}},
	{"alarm_group", []string{"group_key"}},
	{"alarm_delivery", []string{"id"}},
	{"workflow", []string{"id"}},
	{"workflow_version", []string{"workflow_id", "version"}},
	{"workflow_audit", []string{"workflow_id"}},
	{"workflow_backfill", []string{"id"}},
	{"workflow_run", []string{"id"}},
	{"workflow_node_run", []string{"id"}},
}

// copyBatchValues bounds the values of one insert of Copy (SQLite takes
// at most 32,766 placeholders in a statement); a batch holds up to 1,000
// rows.
const copyBatchValues = 30_000

// TableCopy is what Copy did to one table: the rows it moved and the
// checksum of their values, read back from the target.
type TableCopy struct {
	Table    string
	Rows     int64
	Checksum string // 32 hex digits, independent of the order of the rows
}

// CopyReport is the result of Copy, table by table, and the leader's epoch
// the target continues from.
type CopyReport struct {
	Tables []TableCopy
	Epoch  int64
}

// ErrTargetNotEmpty is returned by Copy for a target that holds rows.
var ErrTargetNotEmpty = errors.New("the target database is not empty")

// Copy moves an installation from the database of from to the empty one
// of to, of any dialect: jobs, workflows, calendars, users, sessions, API
// keys, runs, attempts, logs, alarms, statistics and the leader's epoch,
// every id kept. It migrates the target, refuses a source whose schema is
// not this binary's latest (migrate it first) and a target that holds rows
// (ErrTargetNotEmpty), copies each table in key order, moves PostgreSQL's
// identities past the ids copied, and reads every table of both back to
// compare row counts and checksums of the values: it fails, naming the
// table, unless they agree. progress, when not nil, is called after each
// table. The admins of the source must be stopped while it runs: rows
// written meanwhile make the checksums disagree.
func Copy(ctx context.Context, from, to *Store, progress func(TableCopy)) (CopyReport, error) {
	var rep CopyReport
	latest, err := LatestVersion(from.dialect)
	if err != nil {
		return rep, err
	}
	v, err := from.SchemaVersion(ctx)
	if err != nil {
		return rep, fmt.Errorf("source: %w", err)
	}
	if v != latest {
		return rep, fmt.Errorf("the source database is at schema version %d, this binary's is %d: run `shardjob-admin migrate` on it first (with the binary of its admins when it is newer)", v, latest)
	}
	if _, err := to.Migrate(ctx); err != nil {
		return rep, fmt.Errorf("target: %w", err)
	}
	if err := to.checkEmpty(ctx); err != nil {
		return rep, err
	}
	for _, t := range copyTables {
		c, err := copyTable(ctx, from, to, t.name, t.key)
		if err != nil {
			return rep, fmt.Errorf("copy %s: %w", t.name, err)
		}
		rep.Tables = append(rep.Tables, c)
		if progress != nil {
			progress(c)
		}
	}
	l, err := from.q.LeaderGet(ctx, from.db)
	if err != nil {
		return rep, fmt.Errorf("read the source's leader: %w", err)
	}
	if _, err := to.q.CopyLeader(ctx, to.db, copyLeaderParams(l)); err != nil {
		return rep, fmt.Errorf("write the target's leader: %w", err)
	}
	rep.Epoch = l.Epoch
	return rep, nil
}

// checkEmpty fails with ErrTargetNotEmpty, naming a table, when any table
// Copy writes holds a row.
func (s *Store) checkEmpty(ctx context.Context) error {
	for _, t := range copyTables {
		var n int64
		err := s.db.QueryRowContext(ctx, "SELECT 1 FROM "+t.name+" LIMIT 1").Scan(&n)
		if errors.Is(err, sql.ErrNoRows) {
			continue
		}
		if err != nil {
			return fmt.Errorf("target: read %s: %w", t.name, err)
		}
		return fmt.Errorf("%w: table %s has rows; copy into a new, empty database", ErrTargetNotEmpty, t.name)
	}
	return nil
}

// copyColumn is a column Copy moves: its name and how its values compare
// (colInt, colFloat or colText).
type copyColumn struct {
	name string
	kind int
}

const (
	colText = iota
	colInt
	colFloat
)

// columns returns the columns of table that Copy moves (generated ones
// left out), in the table's order.
func (s *Store) columns(ctx context.Context, table string) ([]copyColumn, error) {
	rows, err := s.q.CopyColumns(ctx, s.db, table)
	if err != nil {
		return nil, err
	}
	var out []copyColumn
	for _, r := range rows {
		if r.Generated != "" {
			continue
		}
		c := copyColumn{name: strings.ToLower(r.ColumnName), kind: colText}
		switch t := strings.ToLower(r.DataType); {
		case strings.Contains(t, "int"):
			c.kind = colInt
		case strings.Contains(t, "double"), strings.Contains(t, "float"), strings.Contains(t, "real"), strings.Contains(t, "numeric"), strings.Contains(t, "decimal"):
			c.kind = colFloat
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("table %s has no columns in the %s database", table, s.dialect)
	}
	return out, nil
}

// TableNames lists the tables of the store's database (for the test that
// keeps copyTables whole).
func (s *Store) TableNames(ctx context.Context) ([]string, error) {
	return s.q.CopyTables(ctx, s.db)
}

// copyStatements are the statements that read a table in key order, a page
// at a time, and insert a page into it.
type copyStatements struct {
	first, next, insert string
	keyAt               []int // the positions of the key columns among the columns
}

func newCopyStatements(table string, cols []copyColumn, key []string, page int) (copyStatements, error) {
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = c.name
	}
	st := copyStatements{}
	for _, k := range key {
		i := slices.Index(names, k)
		if i < 0 {
			return st, fmt.Errorf("key column %s is not a column of %s", k, table)
		}
		st.keyAt = append(st.keyAt, i)
	}
	list := strings.Join(names, ", ")
	order := strings.Join(key, ", ")
	limit := " ORDER BY " + order + " LIMIT " + strconv.Itoa(page)
	st.first = "SELECT " + list + " FROM " + table + limit
	after := key[0] + " > ?"
	if len(key) > 1 {
		after = "(" + order + ") > (?" + strings.Repeat(", ?", len(key)-1) + ")"
	}
	st.next = "SELECT " + list + " FROM " + table + " WHERE " + after + limit
	st.insert = "INSERT INTO " + table + " (" + list + ") VALUES (?" + strings.Repeat(", ?", len(cols)-1) + ")"
	return st, nil
}

// copyTable copies one table and checks it: rows and checksum read back
// from the target must be those read from the source.
func copyTable(ctx context.Context, from, to *Store, table string, key []string) (TableCopy, error) {
	out := TableCopy{Table: table}
	cols, err := to.columns(ctx, table)
	if err != nil {
		return out, fmt.Errorf("target columns: %w", err)
	}
	srcCols, err := from.columns(ctx, table)
	if err != nil {
		return out, fmt.Errorf("source columns: %w", err)
	}
	for _, c := range cols {
		if !slices.ContainsFunc(srcCols, func(s copyColumn) bool { return s.name == c.name }) {
			return out, fmt.Errorf("column %s is not in the source's %s", c.name, table)
		}
	}
	page := max(1, min(1000, copyBatchValues/len(cols)))
	st, err := newCopyStatements(table, cols, key, page)
	if err != nil {
		return out, err
	}
	var sum rowSum
	var maxID int64
	idAt := slices.IndexFunc(cols, func(c copyColumn) bool { return c.name == "id" && c.kind == colInt })
	err = readPages(ctx, from, st, cols, func(rows [][]any) error {
		args := make([]any, 0, len(rows)*len(cols))
		for _, r := range rows {
			sum.add(cols, r)
			args = append(args, r...)
			if idAt >= 0 {
				if id, err := asInt(r[idAt]); err == nil {
					maxID = max(maxID, id)
				}
			}
		}
		_, err := to.db.ExecContext(ctx, namedsql.MultiRow(st.insert, len(rows)), args...)
		return err
	})
	if err != nil {
		return out, err
	}
	if idAt >= 0 && to.dialect == sqlfiles.Postgres {
		// NULL when the id is no identity (run_stat_cursor)
		if _, err := to.q.CopyIdentity(ctx, to.db, copyIdentityParams{Table: table, Next: maxID + 1}); err != nil {
			return out, fmt.Errorf("move the identity past %d: %w", maxID, err)
		}
	}
	var back rowSum
	if err := readPages(ctx, to, st, cols, func(rows [][]any) error {
		for _, r := range rows {
			back.add(cols, r)
		}
		return nil
	}); err != nil {
		return out, fmt.Errorf("read back: %w", err)
	}
	if back != sum {
		return out, fmt.Errorf("the target's %d rows (checksum %s) differ from the source's %d (checksum %s)", back.rows, back.hex(), sum.rows, sum.hex())
	}
	out.Rows, out.Checksum = sum.rows, sum.hex()
	return out, nil
}

// readPages reads the table of st from s in key order, a page at a time,
// each row's values as database/sql gives them ([]byte turned into
// string), and calls each with every page.
func readPages(ctx context.Context, s *Store, st copyStatements, cols []copyColumn, each func(rows [][]any) error) error {
	var after []any
	for {
		q, args := st.first, []any(nil)
		if after != nil {
			q, args = st.next, after
		}
		page, err := readPage(ctx, s, q, args, len(cols))
		if err != nil {
			return err
		}
		if len(page) == 0 {
			return nil
		}
		if err := each(page); err != nil {
			return err
		}
		last := page[len(page)-1]
		after = make([]any, len(st.keyAt))
		for i, at := range st.keyAt {
			after[i] = last[at]
		}
	}
}

func readPage(ctx context.Context, s *Store, q string, args []any, n int) ([][]any, error) {
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out [][]any
	for rows.Next() {
		vals := make([]any, n)
		ptrs := make([]any, n)
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		for i, v := range vals {
			if b, ok := v.([]byte); ok {
				vals[i] = string(b)
			}
		}
		out = append(out, vals)
	}
	return out, rows.Err()
}

// rowSum is a checksum of rows that does not depend on their order (the
// dialects sort text keys by different collations): the count, and the
// sum and exclusive or of the first 16 bytes of each row's SHA-256 over
// its values in a form every dialect gives alike.
type rowSum struct {
	rows       int64
	sum0, sum1 uint64
	xor0, xor1 uint64
}

func (r *rowSum) add(cols []copyColumn, row []any) {
	h := sha256.New()
	for i, c := range cols {
		h.Write([]byte(canonical(c.kind, row[i])))
		h.Write([]byte{0})
	}
	d := h.Sum(nil)
	a, b := binary.BigEndian.Uint64(d[:8]), binary.BigEndian.Uint64(d[8:16])
	r.rows++
	r.sum0 += a
	r.sum1 += b
	r.xor0 ^= a
	r.xor1 ^= b
}

func (r rowSum) hex() string { return fmt.Sprintf("%016x%016x", r.sum0^r.xor1, r.sum1^r.xor0) }

// canonical is a value as text, the same whichever dialect read it: NULL
// apart from every text, integers and floating-point numbers by their value.
func canonical(kind int, v any) string {
	if v == nil {
		return "\x01NULL"
	}
	switch kind {
	case colInt:
		if n, err := asInt(v); err == nil {
			return strconv.FormatInt(n, 10)
		}
	case colFloat:
		var f float64
		var err error
		switch x := v.(type) {
		case float64:
			f = x
		case int64:
			f = float64(x)
		case string:
			f, err = strconv.ParseFloat(x, 64)
		default:
			err = fmt.Errorf("a %T", v)
		}
		if err == nil && !math.IsNaN(f) {
			return strconv.FormatFloat(f, 'g', -1, 64)
		}
	}
	return fmt.Sprint(v)
}

func asInt(v any) (int64, error) {
	switch x := v.(type) {
	case int64:
		return x, nil
	case string:
		return strconv.ParseInt(x, 10, 64)
	case float64:
		return int64(x), nil
	case bool:
		if x {
			return 1, nil
		}
		return 0, nil
	}
	return 0, fmt.Errorf("not an integer: %T", v)
}
