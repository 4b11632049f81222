// Package namedsql reads files of named SQL queries, the one format every
// package of shardjob keeps its SQL in (sql/queries*.sql for the admin's
// store and retention, admin/metrics/queries.sql, sdk/records/sql).
//
// A query starts with a line "-- name: Name" and runs to the next such
// line. "-- name: Name.dialect" gives one dialect its own text, which
// replaces the shared one for that dialect (ForDialect). Comment lines
// (starting with "--") inside a query and the final ";" are dropped; lines
// before the first name are the file's header and are ignored.
//
// The package only splits files: each user expands its own macros
// ({{now_ms}}, …) after ForDialect. It imports nothing but the standard
// library, so that the SDK can use it without pulling in admin code.
//
// Names are typed in the packages that run the queries: the generator in
// gen/namegen writes a constant per name ("go generate"), and gen.Check, run
// by a test of each such package, fails when that file is stale or a query
// is used by no code.
package namedsql
