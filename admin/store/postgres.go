package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/jmoiron/sqlx"

	"github.com/shardjob/shardjob/sql/namedsql"
)

// PostgreSQL runs the same named queries as the other dialects: written
// with "?" placeholders, expanded at run time (multi-row inserts, "IN (?)"
// lists, "set by key" updates, sqlx named queries) and bound by
// database/sql. The connection below is where PostgreSQL's differences are
// taken care of, once, for every statement the store runs:
//
//   - the arguments are written into the statement as literals, in the
//     place of its "?" placeholders (outside string literals, quoted names
//     and comments), as the MySQL driver does with InterpolateParams: one
//     round trip per statement over the simple protocol. A number is a bare
//     literal (so that "CASE id WHEN ? THEN ? END" has the type of its
//     numbers, and 1 - 0.3 is not integer arithmetic), text a quoted
//     literal (standard_conforming_strings: a quote is doubled, nothing
//     else is special), which PostgreSQL types by where it stands;
//   - a bool is 0 or 1 (flags are SMALLINT, as on the other dialects);
//   - a statement that ends in "RETURNING id" ({{returning_id}}) run with
//     Exec reports that id as its LastInsertId, which PostgreSQL has no
//     other way to give.

// pgDriverName is the name the store gives sqlx for a PostgreSQL pool:
// sqlx does not know it, so its named queries and In expansions keep "?"
// placeholders, which the connection rebinds.
const pgDriverName = "shardjob-postgres"

// openPostgres opens a pool on the PostgreSQL database of dsn (a URL,
// postgres://user:pass@host:5432/db?sslmode=disable, or key=value pairs).
// Sessions use UTC, and the server ends a transaction that stays idle for
// cfg.IdleTxTimeout (idle_in_transaction_session_timeout) with its
// connection, which frees the locks of a frozen admin.
func openPostgres(dsn string, cfg Config) (*sqlx.DB, error) {
	pc, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("postgres DSN: %w", err)
	}
	pc.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	if pc.ConnectTimeout == 0 || pc.ConnectTimeout > cfg.ConnectTimeout {
		pc.ConnectTimeout = cfg.ConnectTimeout
	}
	if pc.RuntimeParams == nil {
		pc.RuntimeParams = map[string]string{}
	}
	pc.RuntimeParams["timezone"] = "UTC"
	pc.RuntimeParams["standard_conforming_strings"] = "on" // interpolate doubles quotes only
	pc.RuntimeParams["idle_in_transaction_session_timeout"] = strconv.FormatInt(max(1, cfg.IdleTxTimeout.Milliseconds()), 10)
	db := sql.OpenDB(pgConnector{stdlib.GetConnector(*pc)})
	return sqlx.NewDb(db, pgDriverName), nil
}

// pgConnector makes the connections of the pool pgConns.
type pgConnector struct{ base driver.Connector }

func (c pgConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.base.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &pgConn{base: conn.(*stdlib.Conn)}, nil
}

func (c pgConnector) Driver() driver.Driver { return c.base.Driver() }

// pgConn is a pgx connection that rebinds placeholders and arguments (see
// above). It implements the optional interfaces database/sql looks for,
// each by the pgx connection's method.
type pgConn struct{ base *stdlib.Conn }

var (
	_ driver.ConnBeginTx       = (*pgConn)(nil)
	_ driver.ExecerContext     = (*pgConn)(nil)
	_ driver.QueryerContext    = (*pgConn)(nil)
	_ driver.Pinger            = (*pgConn)(nil)
	_ driver.NamedValueChecker = (*pgConn)(nil)
	_ driver.SessionResetter   = (*pgConn)(nil)
)

func (c *pgConn) Prepare(query string) (driver.Stmt, error) {
	return nil, errors.New("the store's PostgreSQL connection does not prepare statements: it writes the arguments into each")
}

func (c *pgConn) Close() error { return c.base.Close() }

// Begin is required by driver.Conn; database/sql calls BeginTx.
func (c *pgConn) Begin() (driver.Tx, error) { return c.base.Begin() }

func (c *pgConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	return c.base.BeginTx(ctx, opts)
}

func (c *pgConn) Ping(ctx context.Context) error { return c.base.Ping(ctx) }

func (c *pgConn) ResetSession(ctx context.Context) error { return c.base.ResetSession(ctx) }

// returningID ends a statement whose Exec reports the id it inserted.
const returningID = "RETURNING id"

func (c *pgConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	query, err := interpolate(query, args)
	if err != nil {
		return nil, err
	}
	if !strings.HasSuffix(strings.TrimRight(query, " \n\t;"), returningID) {
		return c.base.ExecContext(ctx, query, nil)
	}
	rows, err := c.base.QueryContext(ctx, query, nil)
	if err != nil {
		return nil, err
	}
	defer rows.Close() //nolint:errcheck // the rows were read to the end, or an error of theirs is returned
	var res pgInsertResult
	dest := make([]driver.Value, len(rows.Columns()))
	for {
		err := rows.Next(dest)
		if errors.Is(err, io.EOF) {
			return res, nil
		}
		if err != nil {
			return nil, err
		}
		if res.rows == 0 {
			id, ok := dest[0].(int64)
			if !ok {
				return nil, fmt.Errorf("RETURNING id gave %T, not an integer", dest[0])
			}
			res.id = id
		}
		res.rows++
	}
}

func (c *pgConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	query, err := interpolate(query, args)
	if err != nil {
		return nil, err
	}
	return c.base.QueryContext(ctx, query, nil)
}

// CheckNamedValue turns an argument into one of the values interpolate
// writes: nil, int64, float64, string or time.Time (a driver.Valuer gives
// its value first; a bool is 0 or 1, bytes are text).
func (c *pgConn) CheckNamedValue(nv *driver.NamedValue) error {
	if v, ok := nv.Value.(driver.Valuer); ok {
		val, err := v.Value()
		if err != nil {
			return err
		}
		nv.Value = val
	}
	v, err := driver.DefaultParameterConverter.ConvertValue(nv.Value)
	if err != nil {
		return err
	}
	switch x := v.(type) {
	case bool:
		v = int64(0)
		if x {
			v = int64(1)
		}
	case []byte:
		v = string(x)
	}
	nv.Value = v
	return nil
}

// pgInsertResult is the result of an insert with RETURNING id: the first
// id it inserted (as MySQL's LastInsertId of a multi-row insert) and how
// many rows.
type pgInsertResult struct{ id, rows int64 }

func (r pgInsertResult) LastInsertId() (int64, error) { return r.id, nil }
func (r pgInsertResult) RowsAffected() (int64, error) { return r.rows, nil }

// interpolate writes the arguments of q into the places of its "?"
// placeholders (namedsql.Placeholders: not those in literals, quoted names
// and comments). It fails when the counts differ.
func interpolate(q string, args []driver.NamedValue) (string, error) {
	out, n, err := namedsql.Placeholders(q, func(b *strings.Builder, i int) error {
		if i >= len(args) {
			return fmt.Errorf("the statement has more placeholders than its %d arguments", len(args))
		}
		if err := writeLiteral(b, args[i].Value); err != nil {
			return fmt.Errorf("argument %d: %w", i+1, err)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	if n != len(args) {
		return "", fmt.Errorf("the statement has %d placeholders for %d arguments", n, len(args))
	}
	return out, nil
}

// writeLiteral writes v (a value CheckNamedValue gave) as a literal.
func writeLiteral(b *strings.Builder, v any) error {
	switch x := v.(type) {
	case nil:
		b.WriteString("NULL")
	case int64:
		if x == math.MinInt64 {
			// 9223372036854775808 alone would be a numeric, not a bigint.
			b.WriteString("(-9223372036854775807-1)")
			return nil
		}
		if x < 0 {
			// In parentheses: "a - ?" must not become "a --1", a comment.
			b.WriteByte('(')
			b.WriteString(strconv.FormatInt(x, 10))
			b.WriteByte(')')
			return nil
		}
		b.WriteString(strconv.FormatInt(x, 10))
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("%v is not a number a column can hold", x)
		}
		b.WriteByte('(')
		b.WriteString(strconv.FormatFloat(x, 'g', -1, 64))
		b.WriteString("::double precision)")
	case string:
		if strings.IndexByte(x, 0) >= 0 {
			return errors.New("text holds a NUL byte, which PostgreSQL does not store")
		}
		b.WriteByte('\'')
		b.WriteString(strings.ReplaceAll(x, "'", "''"))
		b.WriteByte('\'')
	case time.Time:
		b.WriteByte('\'')
		b.WriteString(x.UTC().Format("2006-01-02 15:04:05.999999Z07:00"))
		b.WriteByte('\'')
	default:
		return fmt.Errorf("cannot write a %T into a statement", v)
	}
	return nil
}

// PostgreSQL's error codes (SQLSTATE) the store acts on.
const (
	pgUniqueViolation      = "23505"
	pgSerializationFailure = "40001"
	pgDeadlock             = "40P01"
	pgLockNotAvailable     = "55P03"
)

// pgCode returns the SQLSTATE of a PostgreSQL error, "" for other errors.
func pgCode(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}
