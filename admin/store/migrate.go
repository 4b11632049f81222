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

var migrationFile = regexp.MustCompile(`^(\d{4})_([a-z0-9_]+)\.sql$`)

// The two section markers of a migration file, each alone on its line.
const (
	upMarker   = "-- migrate up"
	downMarker = "-- migrate down"
)

// Migrations returns the embedded migrations of a dialect, in order. A
// migration is one file, NNNN_name.sql, holding both directions: the
// statements after a line "-- migrate up", then those after a line
// "-- migrate down" (sql/embed.go). It checks that versions start at 1 and
// have no gaps, and that each file has an up section. A dialect added later
// (PostgreSQL) starts instead with one file NNNN_baseline.sql, which builds
// the schema of version NNNN at once; its versions have no gaps after it.
func Migrations(dialect string) ([]Migration, error) {
	dir := dialect + "/migrations"
	entries, err := fs.ReadDir(sqlfiles.FS, dir)
	if err != nil {
		return nil, fmt.Errorf("read embedded migrations for %s: %w", dialect, err)
	}
	byVersion := map[int]Migration{}
	for _, e := range entries {
		m := migrationFile.FindStringSubmatch(e.Name())
		if m == nil {
			return nil, fmt.Errorf("migration file %s/%s: name must look like 0001_name.sql", dir, e.Name())
		}
		v, _ := strconv.Atoi(m[1])
		if other, ok := byVersion[v]; ok {
			// Two branches took the same number: renumber one of them.
			return nil, fmt.Errorf("migrations for %s: version %04d has two files, %s and %s: give one of them the next free number", dialect, v, other.Name, m[2])
		}
		body, err := fs.ReadFile(sqlfiles.FS, dir+"/"+e.Name())
		if err != nil {
			return nil, err
		}
		up, down, err := splitMigration(string(body))
		if err != nil {
			return nil, fmt.Errorf("migration file %s/%s: %w", dir, e.Name(), err)
		}
		byVersion[v] = Migration{Version: v, Name: m[2], Up: up, Down: down}
	}
	out := make([]Migration, 0, len(byVersion))
	for _, m := range byVersion {
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	first := 1
	if len(out) > 0 && out[0].Name == baselineName {
		first = out[0].Version
	}
	for i, m := range out {
		if m.Version != first+i {
			return nil, fmt.Errorf("migrations for %s: expected version %d, found %d (no gaps allowed)", dialect, first+i, m.Version)
		}
		if i > 0 && m.Name == baselineName {
			return nil, fmt.Errorf("migrations for %s: %04d_%s: only the first migration may be a baseline", dialect, m.Version, m.Name)
		}
	}
	return out, nil
}

// baselineName names the first migration of a dialect added later: it
// creates the schema of its version in one step.
const baselineName = "baseline"

// splitMigration cuts a migration file into its up and down sections. Only
// comments and blank lines may stand before the up marker; the up section
// must hold a statement; the down section is optional and comes after the
// up section.
func splitMigration(text string) (up, down string, err error) {
	var sections [2]strings.Builder
	cur := -1 // -1 before the up marker, 0 in up, 1 in down
	for n, line := range strings.Split(text, "\n") {
		trim := strings.TrimSpace(line)
		switch {
		case trim == upMarker && cur == -1:
			cur = 0
		case trim == upMarker:
			return "", "", fmt.Errorf("line %d: a second %q (one up section per file)", n+1, upMarker)
		case trim == downMarker && cur == 0:
			cur = 1
		case trim == downMarker && cur == -1:
			return "", "", fmt.Errorf("line %d: %q before %q (the up section comes first)", n+1, downMarker, upMarker)
		case trim == downMarker:
			return "", "", fmt.Errorf("line %d: a second %q (one down section per file)", n+1, downMarker)
		case cur == -1:
			if trim != "" && !strings.HasPrefix(trim, "--") {
				return "", "", fmt.Errorf("line %d: SQL before %q: start the file with that line (comments may stand above it)", n+1, upMarker)
			}
		default:
			sections[cur].WriteString(line)
			sections[cur].WriteByte('\n')
		}
	}
	if cur == -1 {
		return "", "", fmt.Errorf("no %q line: a migration is the statements after %q, then those after %q", upMarker, upMarker, downMarker)
	}
	up, down = sections[0].String(), sections[1].String()
	if len(splitStatements(up)) == 0 {
		return "", "", fmt.Errorf("the up section (after %q) holds no statement", upMarker)
	}
	return up, down, nil
}

// LatestVersion is the highest migration version this binary knows.
func LatestVersion(dialect string) (int, error) {
	ms, err := Migrations(dialect)
	if err != nil {
		return 0, err
	}
	if len(ms) == 0 {
		return 0, nil
	}
	return ms[len(ms)-1].Version, nil
}

// SchemaVersion returns the highest applied migration (0 for an empty database).
func (s *Store) SchemaVersion(ctx context.Context) (int, error) {
	if _, err := s.q.SchemaMigrationsCreate(ctx, s.db); err != nil {
		return 0, fmt.Errorf("create schema_migrations: %w", err)
	}
	v, err := s.q.SchemaVersion(ctx, s.db)
	if err != nil {
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
	latest := migs[len(migs)-1].Version
	if upTo <= 0 || upTo > latest {
		upTo = latest
	}
	conn, err := s.db.Connx(ctx)
	if err != nil {
		return 0, fmt.Errorf("migrate: %w", err)
	}
	defer conn.Close()
	if got, err := s.q.MigrationLock(ctx, conn); err != nil || got.Int64 != 1 {
		return 0, fmt.Errorf("migrate: could not take the migration lock within 60s (another admin migrating?): %v", err)
	}
	defer s.q.MigrationUnlock(context.WithoutCancel(ctx), conn) //nolint:errcheck // the lock also ends with the connection
	if _, err := s.q.SchemaMigrationsCreate(ctx, conn); err != nil {
		return 0, fmt.Errorf("create schema_migrations: %w", err)
	}
	current, err := s.q.SchemaVersion(ctx, conn)
	if err != nil {
		return 0, fmt.Errorf("read schema version: %w", err)
	}
	if current > latest {
		return 0, fmt.Errorf("%w: database is at version %d, this binary knows up to %d; upgrade shardjob before starting it on this database", ErrSchemaTooNew, current, latest)
	}
	if base := migs[0]; base.Name == baselineName && current > 0 && current < base.Version {
		return 0, fmt.Errorf("migrate: the %s database is at version %d, below its baseline %d: it was not made by shardjob; migrate an empty database", s.dialect, current, base.Version)
	}
	applied := 0
	for _, m := range migs {
		if m.Version <= current || m.Version > upTo {
			continue
		}
		// DDL commits implicitly on MySQL, so statements run one by one and the
		// version row is written last: a crash in between leaves the version
		// unrecorded and the error on the next start names the migration.
		for _, stmt := range splitStatements(m.Up) {
			if _, err := conn.ExecContext(ctx, stmt); err != nil {
				return applied, fmt.Errorf("migration %04d_%s: %w", m.Version, m.Name, err)
			}
		}
		if _, err := s.q.SchemaMigrationRecord(ctx, conn, schemaMigrationRecordParams{Version: m.Version, Name: m.Name}); err != nil {
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
