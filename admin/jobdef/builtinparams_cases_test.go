package jobdef

import "strings"

// builtinParamsCase is a built-in handler's params with one thing wrong.
type builtinParamsCase struct {
	name, handler, params string
}

// builtinParamsCases meet every problem of executor/builtin's Problems that
// the admin can see (builtin.ValidateParams), some of them nested (sql
// statements both dialects refuse, differently).
func builtinParamsCases() []builtinParamsCase {
	sql := func(rest string) string { return `{"datasource": "db", ` + rest + `}` }
	dedup := func(rest string) string { return `{"datasource": "db", ` + rest + `}` }
	return []builtinParamsCase{
		{"params required", "http", "  "},
		{"params too large", "http", `{"url": "http://a.example/` + strings.Repeat("x", 33<<10) + `"}`},
		{"params json type", "http", `{"url": 5}`},
		{"params json invalid", "shell", `{"command":`},
		{"params trailing", "sql", `{"datasource": "db"} x`},
		{"params unknown field", "dedup-archive", `{"datasource": "db", "horizon_days": 3}`},
		{"params timeout", "http", `{"url": "http://a.example/", "timeout_ms": -1}`},
		{"http url required", "http", `{"url": " "}`},
		{"http url parse", "http", `{"url": "http://a.example/%zz"}`},
		{"http url scheme", "http", `{"url": "ftp://example.com/"}`},
		{"http url host", "http", `{"url": "http:///batch"}`},
		{"http host zone", "http", `{"url": "http://[fe80::1%25eth0]/"}`},
		{"http host ipv4", "http", `{"url": "http://1.2.3.999/"}`},
		{"http method", "http", `{"url": "http://a.example/", "method": "fetch"}`},
		{"http header name", "http", `{"url": "http://a.example/", "headers": {"bad name": "x"}}`},
		{"http header set", "http", `{"url": "http://a.example/", "headers": {"content-length": "3"}}`},
		{"http header value", "http", `{"url": "http://a.example/", "headers": {"X-A": "a\nb"}}`},
		{"http max redirects", "http", `{"url": "http://a.example/", "max_redirects": 99}`},
		{"http outcome key", "http", `{"url": "http://a.example/", "outcomes": {"6xx": "fail"}}`},
		{"http outcome action", "http", `{"url": "http://a.example/", "outcomes": {"5xx": "explode"}}`},
		{"shell command required", "shell", `{}`},
		{"shell command path", "shell", `{"command": "bin/../x"}`},
		{"shell args count", "shell", `{"command": "/bin/echo", "args": [` + strings.TrimSuffix(strings.Repeat(`"a",`, 257), ",") + `]}`},
		{"shell arg nul", "shell", `{"command": "/bin/echo", "args": ["a", "b\u0000c"]}`},
		{"shell exit code", "shell", `{"command": "/bin/echo", "retry_exit_codes": [256]}`},
		{"sql datasource", "sql", `{"statement": "SELECT 1"}`},
		{"sql statement required", "sql", `{"datasource": "db"}`},
		{"sql value type", "sql", sql(`"statement": "SELECT ?", "args": [[1]]`)},
		{"sql number range", "sql", sql(`"statement": "SELECT :n", "named": {"n": 1e999}`)},
		{"sql task name", "sql", sql(`"statement": "SELECT :slot", "named": {"slot": 1}`)},
		{"sql unknown name", "sql", sql(`"statement": "SELECT :x"`)},
		{"sql args count", "sql", sql(`"statement": "SELECT ?, ?", "args": [1]`)},
		{"sql named unused", "sql", sql(`"statement": "SELECT 1", "named": {"n": 1}`)},
		{"sql nul", "sql", sql(`"statement": "SELECT 1\u0000"`)},
		{"sql numbered", "sql", sql(`"statement": "SELECT ?1"`)},
		{"sql text after", "sql", sql(`"statement": "SELECT 1; SELECT 2"`)},
		{"sql empty", "sql", sql(`"statement": "-- nothing\n"`)},
		{"sql quote open", "sql", sql(`"statement": "SELECT 'a"`)},
		{"sql comment open", "sql", sql(`"statement": "SELECT /* a"`)},
		{"sql dialects quote bracket", "sql", sql(`"statement": "SELECT [a '"`)},
		{"sql dialects executable comment", "sql", sql(`"statement": "SELECT /*!1 */ [x $$"`)},
		{"sql dialects backslash", "sql", sql(`"statement": "SELECT 'a\\' [x $$"`)},
		{"sql dialects dash semicolon", "sql", sql(`"statement": "SELECT [a $$ --;"`)},
		{"sql dialects dollar numbered", "sql", sql(`"statement": "SELECT $1, [x '"`)},
		{"dedup datasource", "dedup-archive", `{"mode": "delete"}`},
		{"dedup mode", "dedup-archive", dedup(`"mode": "move"`)},
		{"dedup horizon format", "dedup-archive", dedup(`"horizon": "30d"`)},
		{"dedup horizon short", "dedup-archive", dedup(`"horizon": "30m"`)},
		{"dedup job horizon short", "dedup-archive", dedup(`"jobs": {"7": "30m"}`)},
		{"dedup job key", "dedup-archive", dedup(`"jobs": {"settle": "720h"}`)},
		{"dedup lock horizon", "dedup-archive", dedup(`"lock_horizon": "1m"`)},
		{"dedup batch size", "dedup-archive", dedup(`"batch_size": -1`)},
		{"dedup pause", "dedup-archive", dedup(`"pause_ms": 60001`)},
	}
}
