package builtin

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
)

// A PostgreSQL data source is a pool of pgx connections, and every statement
// of the handler runs on one through the extended query protocol (Parse,
// Bind, Execute of the unnamed statement), with or without arguments:
// PostgreSQL parses one statement only there ("cannot insert multiple
// commands into a prepared statement"), so a second statement that
// compileStatement missed fails the whole text, and not even the first
// runs. pgx itself would send a statement without arguments over the simple
// protocol, which runs every statement of the text.
//
// compileStatement reads a statement as PostgreSQL does with client_encoding
// UTF8 and standard_conforming_strings on. Both are session settings that a
// job's SET can change on a pooled connection, and either changes where a
// literal ends: off, a backslash escapes the next character in '…'; in an
// encoding such as SJIS, a byte 0x5C (a backslash) can be the second byte of
// a character. execPostgres therefore puts them back before a statement
// when they differ.

// openPostgres opens (lazily) a pool on dsn, a PostgreSQL URL
// (postgres://user:pass@host:5432/db?sslmode=…) or key=value DSN. pgx
// closes the connection of a statement whose context ends, after a cancel
// request that stops the statement on the server too (TestSQLTimeout).
func openPostgres(dsn string) (*sql.DB, error) {
	if strings.TrimSpace(dsn) == "" {
		return nil, errors.New("postgres needs a DSN: postgres://user:pass@host:5432/db?sslmode=… or key=value pairs (host=db user=app dbname=billing)")
	}
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		// pgx's error quotes the DSN with its password hidden
		// (TestSQLPostgresDSN).
		return nil, fmt.Errorf("not a PostgreSQL DSN (postgres://user:pass@host:5432/db?sslmode=… or key=value pairs): %w", err)
	}
	if cfg.RuntimeParams == nil {
		cfg.RuntimeParams = map[string]string{}
	}
	cfg.RuntimeParams["client_encoding"] = "UTF8"
	cfg.RuntimeParams["standard_conforming_strings"] = "on"
	return stdlib.OpenDB(*cfg), nil
}

// execPostgres runs stmt, one statement compiled for PostgreSQL, with args
// on a connection of db: through the extended protocol, in a session that
// reads it as compileStatement did. A statement that leaves a transaction
// open (BEGIN) is refused and its connection closed, which rolls the
// transaction back: else the statements of later jobs would run in it, on
// that connection, and never be committed.
func execPostgres(ctx context.Context, db *sql.DB, stmt string, args []any) (sql.Result, error) {
	if pgCopyFromStdin(stmt) {
		// The server would wait for the data until the timeout.
		return nil, refused("COPY … FROM STDIN: the sql handler sends no data to copy; copy from a file or program on the database server, or INSERT … SELECT")
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	var (
		tag     pgconn.CommandTag
		refusal error
	)
	err = conn.Raw(func(dc any) error {
		sc, ok := dc.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("postgres: connection %T is not pgx's", dc)
		}
		pc := sc.Conn().PgConn()
		if err := pgSessionAsCompiled(ctx, pc); err != nil {
			return err
		}
		var eqb pgx.ExtendedQueryBuilder
		if err := eqb.Build(sc.Conn().TypeMap(), nil, args); err != nil {
			return err
		}
		// No parameter types: PostgreSQL infers each from where it
		// stands, as for a quoted literal. Close reads and drops the
		// rows of a query.
		rr := pc.ExecParams(ctx, stmt, eqb.ParamValues, nil, eqb.ParamFormats, nil)
		query := len(rr.FieldDescriptions()) > 0
		var err error
		tag, err = rr.Close()
		if query && tag.Select() {
			// A query changes no row, as MySQL and SQLite count it;
			// PostgreSQL's "SELECT n" counts the rows it returned.
			// (CREATE TABLE … AS, whose tag is SELECT n too, returns
			// none and keeps its count.)
			tag = pgconn.NewCommandTag("SELECT 0")
		}
		switch {
		case pc.IsClosed():
			if err == nil {
				err = errors.New("connection closed")
			}
			return fmt.Errorf("%w (%w)", err, driver.ErrBadConn)
		case err == nil && pc.TxStatus() != 'I':
			refusal = refused("the statement left a transaction open (BEGIN, START TRANSACTION): each statement of the sql handler runs in a transaction of its own; the transaction was rolled back")
			return driver.ErrBadConn // database/sql closes the connection
		}
		return err
	})
	if refusal != nil {
		return nil, refusal
	}
	if err != nil {
		return nil, err
	}
	return driver.RowsAffected(tag.RowsAffected()), nil
}

// pgSessionAsCompiled puts client_encoding and standard_conforming_strings
// back to UTF8 and on when a statement of an earlier job changed them on
// the connection (the server reports both whenever they change).
func pgSessionAsCompiled(ctx context.Context, pc *pgconn.PgConn) error {
	asCompiled := func() bool {
		return pc.ParameterStatus("client_encoding") == "UTF8" && pc.ParameterStatus("standard_conforming_strings") == "on"
	}
	if asCompiled() {
		return nil
	}
	if _, err := pc.Exec(ctx, "SET client_encoding = 'UTF8'; SET standard_conforming_strings = on").ReadAll(); err != nil {
		return fmt.Errorf("postgres: setting client_encoding and standard_conforming_strings back: %w", err)
	}
	if !asCompiled() {
		return fmt.Errorf("postgres: the session has client_encoding %q and standard_conforming_strings %q, not UTF8 and on, which the sql handler reads statements with",
			pc.ParameterStatus("client_encoding"), pc.ParameterStatus("standard_conforming_strings"))
	}
	return nil
}

// pgCopyFromStdin reports whether stmt, a statement compiled for
// PostgreSQL, is a COPY … FROM STDIN: its first name is COPY and one of its
// names STDIN (outside literals, quoted identifiers and comments).
func pgCopyFromStdin(stmt string) bool {
	first := true
	for i := 0; i < len(stmt); {
		j, _, err := pgSkipQuoted(stmt, i)
		if err != nil {
			return false
		}
		if j > i {
			i = j
			continue
		}
		if j = pgNameEnd(stmt, i, dialectPostgres); j == i {
			if first && !isSpace(stmt[i]) {
				return false
			}
			i++
			continue
		}
		name := stmt[i:j]
		switch {
		case first && !strings.EqualFold(name, "copy"):
			return false
		case !first && strings.EqualFold(name, "stdin"):
			return true
		}
		first = false
		i = j
	}
	return false
}
