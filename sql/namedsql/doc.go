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
// A fragment is a piece of SQL written once for several queries, typically
// the column list of a table: it starts with a line "-- fragment: Name"
// (dialect blocks as for queries) and is not a query of its own. ForDialect
// and Portable replace its uses, in queries and in other fragments:
//
//	{{Name}}          the fragment's text
//	{{named(Name)}}   a column list as named parameters: ":c1, :c2, …"
//	{{assign(Name)}}  a column list set from them: "c1 = :c1, c2 = :c2, …"
//
// so that an insert and an update bind a row struct by its db tags (sqlx
// named queries) and a new column is added to one list.
//
// Beyond fragments the package only splits files: each user expands its own
// macros ({{now_ms}}, …) after ForDialect. It imports nothing but the standard
// library, so that the SDK can use it without pulling in admin code.
//
// Names are typed in the packages that run the queries: the generator in
// gen/namegen writes a constant per name ("go generate"), and gen.Check, run
// by a test of each such package, fails when that file is stale or a query
// is used by no code.
package namedsql
