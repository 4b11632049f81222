// Package builtin holds the handlers built into the ready-made executor
// binary, registered under the names http, sql and shell. A job names one
// of them as its handler and configures it with JSON params; the operator
// of the executor decides what each may reach. docs/builtin-handlers.md
// lists the params and the executor flags.
//
//   - http calls one URL per slot. Destinations must be on the executor's
//     allow-list (HTTPConfig.Allow, empty by default: nothing is reached).
//     Loopback, private, link-local, unique-local, CGNAT, multicast,
//     unspecified, reserved and translated (IPv4-mapped, NAT64, 6to4,
//     Teredo) addresses are refused unless their IP or CIDR is listed.
//     The check is made in the dialer on every address a name resolves
//     to, and the connection goes to the checked address (no second
//     lookup, so DNS rebinding cannot bypass it); redirects are capped and
//     each hop is checked the same way. Numeric hosts are read as
//     resolvers read them (127.1, 0x7f000001, 2130706433, 0177.0.0.1,
//     [::ffff:127.0.0.1]) and checked as the address they denote. The
//     status maps to success, retry or fail; the response body is read up
//     to a cap and a prefix is logged.
//   - sql runs one parameterised statement per slot against a data source
//     configured on the executor (SQLConfig.DataSources, by name). Values
//     come from the params' args (?) and named values (:name), and the
//     task's own :slot, :total, :run_id, :job_id, :attempt and :token; they
//     are always bound by the driver, never written into the statement.
//     The statement is read the way its data source's database reads it
//     (MySQL's or SQLite's quoting and comments) and must be one
//     statement. On SQLite, SQLite's own tokenizer must agree before it
//     runs, and the data source's connections run in defensive mode with
//     no database attachable and an authorizer refusing ATTACH, DETACH,
//     VACUUM, load_extension() and every PRAGMA that does more than read
//     the schema: a statement cannot reach another file. The rows
//     affected are counted as processed records.
//   - shell runs one program per slot, only when the operator enabled the
//     handler (ShellConfig.Enabled, off by default) and only programs on
//     its allow-list of absolute paths, executed directly with an argv (no
//     shell), a minimal environment plus SHARDJOB_SLOT, SHARDJOB_TOTAL and
//     friends, output lines logged (capped). Cancellation or timeout sends
//     SIGTERM to the process group, then SIGKILL after a grace period.
//
// Outcomes. A handler returns nil on success, a *RetryableError (test with
// IsRetryable) for a failure that may pass on another attempt (HTTP 5xx,
// 408, 425 or 429, a connection error, a timeout of the handler's own
// request, a deadlock, an exit code listed in retry_exit_codes), and a plain
// error otherwise; refusals by the executor's policy wrap ErrRefused. The
// slot result protocol has no retryable flag yet: both kinds of failure
// fail the slot, the error text ends in "(retryable)" for the first kind,
// and the job's retry policy (retry_max) applies to both.
//
// Validation. ValidateParams is the pure check the admin runs when a job
// naming a built-in handler is saved; each handler runs the same parser
// again on every slot. What depends on one executor's configuration (an
// allow-listed host, a configured data source, the shell being enabled) is
// only known where the job runs, and reported there.
package builtin
