package testenv

import (
	"context"
	"database/sql"
	"database/sql/driver"

	"github.com/jackc/pgx/v5/stdlib"

	"github.com/shardjob/shardjob/sql/namedsql"
)

// PostgresQMarkDriver is the database/sql driver name of pgx for tests,
// with one difference: a statement written with "?" placeholders (the
// tests' own statements, written once for every dialect) has them
// numbered ($1, $2, …; see namedsql.Dollar). A statement numbered already
// goes through unchanged, over pgx's extended protocol as in production.
const PostgresQMarkDriver = "pgx-qmark"

func init() { sql.Register(PostgresQMarkDriver, pgQMarkDriver{}) }

type pgQMarkDriver struct{}

func (pgQMarkDriver) Open(name string) (driver.Conn, error) {
	c, err := stdlib.GetDefaultDriver().Open(name)
	if err != nil {
		return nil, err
	}
	return &pgQMarkConn{c.(*stdlib.Conn)}, nil
}

type pgQMarkConn struct{ *stdlib.Conn }

func (c *pgQMarkConn) Prepare(q string) (driver.Stmt, error) {
	return c.Conn.Prepare(namedsql.Dollar(q))
}

func (c *pgQMarkConn) PrepareContext(ctx context.Context, q string) (driver.Stmt, error) {
	return c.Conn.PrepareContext(ctx, namedsql.Dollar(q))
}

func (c *pgQMarkConn) ExecContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Result, error) {
	return c.Conn.ExecContext(ctx, namedsql.Dollar(q), args)
}

func (c *pgQMarkConn) QueryContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Rows, error) {
	return c.Conn.QueryContext(ctx, namedsql.Dollar(q), args)
}
