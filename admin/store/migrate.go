package store

import (
	"context"
	"fmt"
	"io/fs"
	"regexp"
	"sort"
	"strconv"
	"strings"

	sqlfiles "github.com/shardjob/shardjob/sql"
)

// Migration is one embedded schema step.
type Migration struct {
	Version int
	Name    string
	Up      string
	Down    string
}

var migrationFile = regexp.MustCompile(`^(\d{4})_([a-z0-9_]+)\.(up|down)\.sql$`)

// Migrations returns the embedded migrations of a dialect, in order. It
// checks that versions start at 1, have no gaps, each has one name and an up
// file.
func Migrations(dialect string) ([]Migration, error) {
	dir := dialect + "/migrations"
	entries, err := fs.ReadDir(sqlfiles.FS, dir)
	if err != nil {
		return nil, fmt.Errorf("read embedded migrations for %s: %w", dialect, err)
	}
	byVersion := map[int]*Migration{}
	for _, e := range entries {
		m := migrationFile.FindStringSubmatch(e.Name())
		if m == nil {
			return nil, fmt.Errorf("migration file %s/%s: name must look like 0001_name.up.sql", dir, e.Name())
		}
		v, _ := strconv.Atoi(m[1])
		body, err := fs.ReadFile(sqlfiles.FS, dir+"/"+e.Name())
		if err != nil {
			return nil, err
		}
		mig := byVersion[v]
		if mig == nil {
			mig = &Migration{Version: v, Name: m[2]}
			byVersion[v] = mig
		}
		if mig.Name != m[2] {
			// Two branches took the same number: renumber one of them.
			return nil, fmt.Errorf("migrations for %s: version %04d has two names, %s and %s: give one of them the next free number", dialect, v, mig.Name, m[2])
		}
		if m[3] == "up" {
			mig.Up = string(body)
		} else {
			mig.Down = string(body)
		}
	}
	out := make([]Migration, 0, len(byVersion))
	for _, m := range byVersion {
		out = append(out, *m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	for i, m := range out {
		if m.Version != i+1 {
			return nil, fmt.Errorf("migrations for %s: expected version %d, found %d (no gaps allowed)", dialect, i+1, m.Version)
		}
		if strings.TrimSpace(m.Up) == "" {
			return nil, fmt.Errorf("migration %04d_%s (%s) has no up file", m.Version, m.Name, dialect)
		}
	}
	return out, nil
}

// LatestVersion is the highest migration version this binary knows.
func LatestVersion(dialect string) (int, error) {
	ms, err := Migrations(dialect)
	if err != nil {
		return 0, err
	}
	return len(ms), nil
}

// SchemaVersion returns the highest applied migration (0 for an empty database).
func (s *Store) SchemaVersion(ctx context.Context) (int, error) {
	if _, err := s.db.ExecContext(ctx, s.q.get(qSchemaMigrationsCreate)); err != nil {
		return 0, fmt.Errorf("create schema_migrations: %w", err)
	}
	var v int
	if err := s.db.GetContext(ctx, &v, s.q.get(qSchemaVersion)); err != nil {
		return 0, fmt.Errorf("read schema version: %w", err)
	}
	return v, nil
}

// Migrate applies every migration newer than the database's version and
// returns how many it applied. Applying twice is a no-op. Concurrent callers
// (several admins starting at once) are serialised with a named lock on
// MySQL. A database newer than the binary fails with ErrSchemaTooNew.
func (s *Store) Migrate(ctx context.Context) (int, error) {
	return s.migrate(ctx, 0)
}

// migrate is Migrate up to version upTo (0: the latest); tests stop
// earlier to check what a migration does to the data it finds.
func (s *Store) migrate(ctx context.Context, upTo int) (int, error) {
	migs, err := Migrations(s.dialect)
	if err != nil {
		return 0, err
	}
	if upTo <= 0 || upTo > len(migs) {
		upTo = len(migs)
	}
	conn, err := s.db.Connx(ctx)
	if err != nil {
		return 0, fmt.Errorf("migrate: %w", err)
	}
	defer conn.Close()
	var got int
	if err := conn.GetContext(ctx, &got, s.q.get(qMigrationLock)); err != nil || got != 1 {
		return 0, fmt.Errorf("migrate: could not take the migration lock within 60s (another admin migrating?): %v", err)
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), s.q.get(qMigrationUnlock)) //nolint:errcheck // the lock also ends with the connection
	if _, err := conn.ExecContext(ctx, s.q.get(qSchemaMigrationsCreate)); err != nil {
		return 0, fmt.Errorf("create schema_migrations: %w", err)
	}
	var current int
	if err := conn.GetContext(ctx, &current, s.q.get(qSchemaVersion)); err != nil {
		return 0, fmt.Errorf("read schema version: %w", err)
	}
	if current > len(migs) {
		return 0, fmt.Errorf("%w: database is at version %d, this binary knows up to %d; upgrade shardjob before starting it on this database", ErrSchemaTooNew, current, len(migs))
	}
	applied := 0
	for _, m := range migs[min(current, upTo):upTo] {
		// DDL commits implicitly on MySQL, so statements run one by one and the
		// version row is written last: a crash in between leaves the version
		// unrecorded and the error on the next start names the migration.
		for _, stmt := range splitStatements(m.Up) {
			if _, err := conn.ExecContext(ctx, stmt); err != nil {
				return applied, fmt.Errorf("migration %04d_%s: %w", m.Version, m.Name, err)
			}
		}
		if _, err := conn.ExecContext(ctx, s.q.get(qSchemaMigrationRecord), m.Version, m.Name); err != nil {
			return applied, fmt.Errorf("record migration %04d: %w", m.Version, err)
		}
		applied++
	}
	return applied, nil
}

// splitStatements splits a migration on semicolons at line ends, skipping
// comment-only chunks. Migrations must not put ';' at the end of a line
// inside string literals.
func splitStatements(sqlText string) []string {
	var out []string
	var cur strings.Builder
	for _, line := range strings.Split(sqlText, "\n") {
		trim := strings.TrimSpace(line)
		if strings.HasPrefix(trim, "--") || trim == "" {
			continue
		}
		cur.WriteString(line)
		cur.WriteByte('\n')
		if strings.HasSuffix(trim, ";") {
			out = append(out, strings.TrimSuffix(strings.TrimSpace(cur.String()), ";"))
			cur.Reset()
		}
	}
	if s := strings.TrimSpace(cur.String()); s != "" {
		out = append(out, s)
	}
	return out
}
