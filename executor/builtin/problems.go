package builtin

// Problems is the English of every problem a built-in handler's params can
// have, by code: the Problem of a ParamsError, {name} standing for an
// argument. admin/msg's catalog holds each as "builtin.<code>", so that the
// console shows it in the reader's language (a test of admin/jobdef checks
// that the two agree).
var Problems = map[string]string{
	"error": "{error}",

	"params.required":         "required: a JSON object, see docs/builtin-handlers.md",
	"params.too_large":        "{bytes} bytes, at most {max}",
	"params.json_type":        "want a JSON {want}, not {got}",
	"params.json_invalid":     "not a valid JSON object: {error}",
	"params.trailing":         "unexpected data after the JSON object",
	"params.timeout":          "{value}: want 1 to {max} milliseconds (0 or absent: {default})",
	"params.timeout_executor": "{value} ms exceeds this executor's maximum of {max}",

	"http.url_required":   `required, e.g. "https://api.example.com/batch?slot={slot}"`,
	"http.url_parse":      "{url} is not a URL: {error}",
	"http.url_scheme":     "{url}: only http and https URLs are allowed",
	"http.url_host":       "{url} has no host",
	"http.host_ipv6":      "host {host} is not a valid IPv6 address",
	"http.host_zone":      "refused by the executor's policy: host {host}: addresses with an IPv6 zone are not allowed",
	"http.host_ipv4":      "host {host} ends in a number but is not a valid IPv4 address",
	"http.method":         "{value}: use GET, HEAD, POST, PUT, PATCH, DELETE or OPTIONS",
	"http.header_name":    "{header} is not a valid header name",
	"http.header_set":     "{header} is set by the handler, not the params",
	"http.header_value":   "the value of {header} contains a line break or NUL",
	"http.max_redirects":  "{value}: want 0 (do not follow) to {max}",
	"http.outcome_key":    `key {key}: use a status class ("2xx" … "5xx") or a status code (100-599)`,
	"http.outcome_action": "{key}: {value}: use success, retry or fail",

	"shell.command_required": "required: the absolute path of a program on the executors' --shell-allow list",
	"shell.command_path":     `{value}: want a clean absolute path (no shell: no PATH lookup, arguments go in "args")`,
	"shell.args_count":       "{count} arguments, at most {max}",
	"shell.arg_nul":          "contains a NUL byte",
	"shell.exit_code":        "{value}: want exit codes 1-255 (0 is always success)",

	"sql.dialects":             "for a MySQL data source: {mysql}; for a SQLite data source: {sqlite}; for a PostgreSQL data source: {postgres}",
	"sql.datasource":           "required: the name of a data source configured on the executors (--sql-datasource name=driver:dsn)",
	"sql.statement_required":   `required, e.g. "UPDATE invoice SET state = ? WHERE MOD(id, :total) = :slot"`,
	"sql.task_name":            "{name} is set by the handler (the task's {key}); pick another name",
	"sql.unknown_name":         `:{key} is neither a task value (:slot, :total, :run_id, :job_id, :attempt, :token) nor a key of "named"`,
	"sql.args_count":           "the statement has {placeholders} ? placeholders but args has {values} values",
	"sql.named_unused":         "{name} is not used by the statement (no :{key} in it)",
	"sql.number_range":         "{value}: number out of range",
	"sql.value_type":           "want a string, number, boolean or null, not a JSON {type}",
	"sql.nul":                  `a NUL character (\u0000) at byte {at}: the database would stop reading the statement there; remove it`,
	"sql.numbered":             "numbered placeholders (?{char}…) are not supported: use ? or :name",
	"sql.dollar_numbered":      "the numbered placeholder at byte {at} is not supported: use ? or :name, which the handler numbers $1, $2, … for PostgreSQL",
	"sql.text_after":           "one statement only: text follows the ';' at byte {at}; run each statement as a job of its own",
	"sql.dash_semicolon":       "the -- right before the ';' at byte {at} is two minus signs to MySQL, but a comment once the ';' is gone: put a space between the minus signs, or write a comment as -- followed by a space",
	"sql.empty":                "empty statement: nothing but white space and comments",
	"sql.bracket_open":         "the [ identifier at byte {at} is not closed with ]",
	"sql.executable_comment":   "the executable comment /*!…*/ at byte {at} is run by MySQL and MariaDB, not skipped: write its text as plain SQL",
	"sql.comment_open":         "the /* comment at byte {at} is not closed",
	"sql.quote_open":           "the {quote} quote at byte {at} is not closed",
	"sql.backslash_literal":    "the {quote} literal at byte {at} ends at a different place depending on whether the MySQL server reads backslashes as escapes (sql_mode without NO_BACKSLASH_ESCAPES) or not: write a quote inside a literal as two quotes ({quote}{quote}), not with a backslash, or pass the value as an argument",
	"sql.sqlite_semicolons":    "{count} ';' characters inside literals or comments, at most {max} on a SQLite data source: pass such text as an argument",
	"sql.sqlite_one_statement": "one statement only: SQLite ends the statement at the ';' before {text} and would run that as another statement; run each statement as a job of its own",

	"dedup_archive.datasource":     "required: the name of a data source configured on the executors (--sql-datasource name=driver:dsn) holding dedup_record",
	"dedup_archive.mode":           `{value}: want "archive" (move the rows to dedup_record_archive, the default) or "delete"`,
	"dedup_archive.horizon_format": `{value}: want a duration such as "720h" (30 days)`,
	"dedup_archive.horizon_short":  "{value}: at least {min} (a record whose dedup row is gone is processed again)",
	"dedup_archive.job_key":        "key {key}: want a job id (dedup rows name their job by id, not by name; the console shows the id)",
	"dedup_archive.lock_horizon":   `{value}: want a duration of at least {min} such as "24h" (above the longest a slot attempt can live: a purged shard lock no longer fences its run's old attempts), or "keep"`,
	"dedup_archive.batch_size":     "{value}: want 1 to {max} (0 or absent: {default})",
	"dedup_archive.pause":          "{value}: want 0 (no pause) to 60000 milliseconds (absent: {default})",
}
