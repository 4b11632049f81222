package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/sdk/cliflags"
	sqlfiles "github.com/shardjob/shardjob/sql"
)

// cmdCopy moves an installation between databases of any dialect
// (store.Copy): shardjob-admin copy --from mysql://… --to postgres://….
func cmdCopy(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	f := cliflags.New("copy", stderr)
	from := f.Str("from", "", "the database to copy: mysql://user:pw@tcp(host:3306)/db, postgres://user:pw@host:5432/db or sqlite://path (stop its admins first)")
	to := f.Str("to", "", "the new, empty database to copy into, written as --from (it is migrated; one that holds rows is refused)")
	if err := f.Parse(args); err != nil {
		return err
	}
	src, err := openURL(ctx, "from", *from)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := openURL(ctx, "to", *to)
	if err != nil {
		return err
	}
	defer dst.Close()
	fmt.Fprintf(stdout, "shardjob: copying %s → %s\n", src.Dialect(), dst.Dialect())
	var rows int64
	rep, err := store.Copy(ctx, src, dst, func(c store.TableCopy) {
		rows += c.Rows
		fmt.Fprintf(stdout, "  %-20s %10d rows  checksum %s\n", c.Table, c.Rows, c.Checksum)
	})
	if err != nil {
		return fmt.Errorf("copy: %w", err)
	}
	fmt.Fprintf(stdout, "shardjob: copied %d rows of %d tables, ids kept, every table read back and checked; the leader's epoch continues from %d\n",
		rows, len(rep.Tables), rep.Epoch)
	return nil
}

// openURL opens the store a --from or --to value names: the scheme is the
// driver, the rest its DSN (a PostgreSQL URL is its own DSN).
func openURL(ctx context.Context, flagName, u string) (*store.Store, error) {
	scheme, rest, ok := strings.Cut(u, "://")
	if !ok || rest == "" {
		return nil, fmt.Errorf("--%s %q: want mysql://user:pw@tcp(host:3306)/db, postgres://user:pw@host:5432/db or sqlite://path",
			flagName, u)
	}
	driver, dsn := scheme, rest
	switch scheme {
	case "postgres", "postgresql":
		driver, dsn = sqlfiles.Postgres, u
	case sqlfiles.MySQL, sqlfiles.SQLite:
	default:
		return nil, fmt.Errorf("--%s: unknown database %q: use mysql, postgres or sqlite", flagName, scheme)
	}
	st, err := store.Open(ctx, store.Config{Driver: driver, DSN: dsn})
	if err != nil {
		return nil, fmt.Errorf("--%s: %w", flagName, err)
	}
	return st, nil
}
