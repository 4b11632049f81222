package builtin

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"modernc.org/libc"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// A SQLite data source is a file the executor opens with its own rights, and
// SQLite can reach other files from SQL: ATTACH DATABASE opens (or creates)
// any file, VACUUM INTO writes one, some PRAGMAs change the connection or
// write the schema, load_extension() loads code. The sql handler therefore
// opens its SQLite data sources through a driver of its own (not the
// process-wide "sqlite" one, which the platform store in standalone mode
// uses), whose every connection
//
//   - runs in SQLite's defensive mode (_defensive=1: no writable_schema, no
//     writes to sqlite_dbpage or to virtual tables' shadow tables),
//   - has an authorizer (sqliteDenial) that refuses ATTACH (and so VACUUM
//     and VACUUM INTO, which attach the database they write), DETACH, every
//     PRAGMA but a few that only read the schema, and load_extension(),
//
// and every statement of the handler runs with SQLite's limit on attached
// databases set to 0, after SQLite's own tokenizer agreed that it is one
// statement (sqliteOneStatement).
var guardedSQLite = func() *sqlite.Driver {
	d := &sqlite.Driver{}
	d.RegisterConnectionHook(func(c sqlite.ExecQuerierContext, _ string) error {
		return registerAuthorizer(c, sqliteAuthorize)
	})
	return d
}()

// sqliteConnector opens connections of one data source with guardedSQLite.
type sqliteConnector struct{ dsn string }

func (c sqliteConnector) Connect(ctx context.Context) (driver.Conn, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return guardedSQLite.Open(c.dsn)
}

func (c sqliteConnector) Driver() driver.Driver { return guardedSQLite }

// openSQLite opens (lazily) a pool on the data source dsn, a file name or
// file: URI of modernc.org/sqlite, in defensive mode.
func openSQLite(dsn string) (*sql.DB, error) {
	path, query, hasQuery := strings.Cut(dsn, "?")
	if strings.TrimSpace(path) == "" {
		return nil, errors.New("sqlite needs a file name")
	}
	if !hasQuery {
		return sql.OpenDB(sqliteConnector{dsn: dsn + "?_defensive=1"}), nil
	}
	q, err := url.ParseQuery(query)
	if err != nil {
		return nil, fmt.Errorf("sqlite: the query of the file name does not parse: %v", err)
	}
	if vs, ok := q["_defensive"]; ok {
		if on, err := strconv.ParseBool(vs[0]); len(vs) != 1 || err != nil || !on {
			return nil, errors.New("sqlite: the sql handler runs SQLite data sources in defensive mode: remove _defensive from the file name")
		}
		return sql.OpenDB(sqliteConnector{dsn: dsn}), nil
	}
	return sql.OpenDB(sqliteConnector{dsn: dsn + "&_defensive=1"}), nil
}

// sqliteReadPragmas are the PRAGMAs the handler allows: they only read the
// schema or check the database, whatever their argument (a table or index
// name, or a number of errors to report). They are also the only pragma_*
// table-valued functions allowed.
var sqliteReadPragmas = map[string]bool{
	"table_info": true, "table_xinfo": true, "table_list": true,
	"index_list": true, "index_info": true, "index_xinfo": true,
	"foreign_key_list": true, "foreign_key_check": true,
	"integrity_check": true, "quick_check": true,
}

// sqliteReadPragmaList is sqliteReadPragmas for messages.
var sqliteReadPragmaList = func() string {
	names := make([]string, 0, len(sqliteReadPragmas))
	for n := range sqliteReadPragmas {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}()

// sqliteDenial is the authorizer's policy: why SQLite must not compile the
// action, or "" when it may. arg1 and arg2 are the authorizer's (for
// ATTACH the file name, for PRAGMA the name and argument, for a function
// call its name in arg2).
func sqliteDenial(action sqlite.AuthorizerActionCode, arg1, arg2 string) string {
	switch action {
	case sqlite.AuthAttach:
		if arg1 == "" {
			return "VACUUM (it attaches a copy of the database) or ATTACH of a temporary database: a statement of the sql handler attaches no database; run VACUUM outside shardjob"
		}
		return fmt.Sprintf("opening %q (ATTACH DATABASE, VACUUM INTO): a statement of the sql handler may not open another database file; give each database a data source of its own (--sql-datasource on the executor)", arg1)
	case sqlite.AuthDetach:
		return "DETACH: the sql handler attaches no database"
	case sqlite.AuthPragma:
		if sqliteReadPragmas[strings.ToLower(arg1)] {
			return ""
		}
		return fmt.Sprintf("PRAGMA %s: the sql handler allows only the PRAGMAs that read the schema (%s); set connection PRAGMAs in the data source's file name on the executor (_pragma=…)", strings.ToLower(arg1), sqliteReadPragmaList)
	case sqlite.AuthFunction:
		if strings.EqualFold(arg2, "load_extension") {
			return "load_extension(): the sql handler loads no code into the executor"
		}
	}
	return ""
}

func sqliteAuthorize(action sqlite.AuthorizerActionCode, arg1, arg2, _, _ string) sqlite.AuthorizerReturnCode {
	if sqliteDenial(action, arg1, arg2) != "" {
		return sqlite.AuthorizerDeny
	}
	return sqlite.AuthorizerOK
}

// registerAuthorizer installs fn on c, a connection of guardedSQLite.
func registerAuthorizer(c any, fn sqlite.AuthorizerFn) error {
	r, ok := c.(sqlite.AuthorizerRegisterer)
	if !ok {
		return fmt.Errorf("sqlite: connection %T has no authorizer: modernc.org/sqlite too old", c)
	}
	return r.RegisterAuthorizer(fn)
}

// execSQLite runs stmt, one statement compiled for SQLite, on a connection
// of db with no database attachable and an authorizer that also records why
// it refused, so that the error says it.
func execSQLite(ctx context.Context, db *sql.DB, stmt string, args []any) (sql.Result, error) {
	if err := sqliteOneStatement(stmt); err != nil {
		return nil, err
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	var denied string
	record := func(action sqlite.AuthorizerActionCode, arg1, arg2, _, _ string) sqlite.AuthorizerReturnCode {
		why := sqliteDenial(action, arg1, arg2)
		if why == "" {
			return sqlite.AuthorizerOK
		}
		if denied == "" {
			denied = why
		}
		return sqlite.AuthorizerDeny
	}
	if err := conn.Raw(func(c any) error { return registerAuthorizer(c, record) }); err != nil {
		return nil, err
	}
	// Back to the policy without the recorder; a connection that keeps
	// the recorder is not returned to the pool.
	defer func() {
		_ = conn.Raw(func(c any) error {
			if err := registerAuthorizer(c, sqliteAuthorize); err != nil {
				return driver.ErrBadConn
			}
			return nil
		})
	}()
	if _, err := sqlite.Limit(conn, sqlite3.SQLITE_LIMIT_ATTACHED, 0); err != nil {
		return nil, err
	}
	res, err := conn.ExecContext(ctx, stmt, args...)
	if err != nil && denied != "" {
		return nil, refused("%s", denied)
	}
	return res, err
}

// sqliteMaxSemicolons bounds the ';' inside the literals and comments of a
// statement for a SQLite data source: sqliteOneStatement reads the text
// once for each.
const sqliteMaxSemicolons = 256

// sqliteOneStatement asks SQLite's own tokenizer whether stmt, a statement
// compiled for SQLite (no ';' of its own but inside literals and
// comments), is one statement to SQLite too: the driver runs every
// statement of a text, and SQLite ends one at a ';' exactly where the text
// up to it is complete (sqlite3_complete). This holds even if
// compileStatement misread the text.
func sqliteOneStatement(stmt string) error {
	n := strings.Count(stmt, ";")
	if n == 0 {
		return nil
	}
	if n > sqliteMaxSemicolons {
		return paramsErr(NameSQL, "statement", "sql.sqlite_semicolons", "count", n, "max", sqliteMaxSemicolons)
	}
	tls := libc.NewTLS()
	defer tls.Close()
	for i := 0; i < len(stmt); i++ {
		if stmt[i] != ';' || strings.TrimSpace(stmt[i+1:]) == "" {
			continue
		}
		complete, err := sqliteComplete(tls, stmt[:i+1])
		if err != nil {
			return err
		}
		if complete {
			return paramsErr(NameSQL, "statement", "sql.sqlite_one_statement", "text", fmt.Sprintf("%q", cappedPrefix([]byte(stmt[i+1:]), 40)))
		}
	}
	return nil
}

// sqliteComplete is sqlite3_complete: whether text ends a statement.
func sqliteComplete(tls *libc.TLS, text string) (bool, error) {
	p, err := libc.CString(text)
	if err != nil {
		return false, err
	}
	defer libc.Xfree(tls, p)
	return sqlite3.Xsqlite3_complete(tls, p) != 0, nil
}
