// Package sqlfiles embeds shardjob's SQL: the versioned migrations of the
// platform schema for each dialect (mysql/migrations, postgres/migrations,
// sqlite/migrations) and the named queries the store runs (queries.sql and
// queries_*.sql: one file per area, read in name order; a name may be
// defined only once over all), in the format of package sql/namedsql.
//
// The directory is named sql/ so that the SQL stays in reviewable .sql files;
// the Go package is named sqlfiles so that it does not shadow database/sql.
//
// A migration is one file per dialect, NNNN_description.sql, with both
// directions: the statements after a line "-- migrate up", then those that
// undo them after a line "-- migrate down" (comments may stand above the
// first). Versions start at 1 and have no gaps, except that a dialect added
// later starts with one baseline file, NNNN_baseline.sql, which creates the
// schema of version NNNN at once (postgres: 0046_baseline.sql).
package sqlfiles

import "embed"

// FS holds every .sql file below this directory.
//
//go:embed mysql/migrations/*.sql postgres/migrations/*.sql sqlite/migrations/*.sql queries*.sql
var FS embed.FS

// Dialect names used as directory names.
const (
	MySQL    = "mysql"
	Postgres = "postgres"
	SQLite   = "sqlite"
)

// Dialects are every dialect, in the order tools list them.
var Dialects = []string{MySQL, Postgres, SQLite}
