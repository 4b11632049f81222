// Package cliflags is the one flag convention of shardjob's commands
// (shardjob-admin and shardjob-executor): every flag can also be set by a
// SHARDJOB_* environment variable (--db-dsn is SHARDJOB_DB_DSN) and by a
// line "db-dsn = …" of the file named by --config (or SHARDJOB_CONFIG).
// The command line wins over the file, the file over the environment, the
// environment over the default. An environment value that does not parse
// is an error naming the variable, reported by Parse.
//
// It also builds the commands' loggers (NewLogger), so that --log-format and
// --log-level mean the same everywhere.
package cliflags
