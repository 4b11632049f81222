package builtin

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/sdk"
)

func TestValidateParams(t *testing.T) {
	t.Parallel()
	require.NoError(t, ValidateParams("demo.hello", "records=5"), "not a built-in: not checked")
	for _, ok := range []struct{ handler, params string }{
		{"http", `{"url": "https://api.example.com/x?slot={slot}"}`},
		{"http", `{"url": "http://10.0.0.1/", "method": "post", "headers": {"Authorization": "Bearer x"}, "body": "{}", "timeout_ms": 1000, "max_redirects": 0, "outcomes": {"4xx": "retry", "404": "success"}}`},
		{"sql", `{"datasource": "biz", "statement": "UPDATE t SET a = ? WHERE id % :total = :slot AND b = :b", "args": [1.5], "named": {"b": null}}`},
		{"shell", `{"command": "/usr/local/bin/reindex", "args": ["--slot={slot}"], "retry_exit_codes": [75]}`},
	} {
		require.NoError(t, ValidateParams(ok.handler, ok.params), ok.params)
	}
	for _, bad := range []struct{ handler, params, want string }{
		{"http", ``, "http handler params: required: a JSON object"},
		{"http", `{"url": "x"`, "not a valid JSON object"},
		{"http", `{"url": "http://a/"} {}`, "unexpected data after the JSON object"},
		{"http", `{"uri": "http://a/"}`, `unknown field "uri"`},
		{"http", `{"url": 5}`, "url: want a JSON string"},
		{"http", `{}`, "url: required"},
		{"http", `{"url": "file:///etc/passwd"}`, "url: \"file:///etc/passwd\": only http and https"},
		{"http", `{"url": "http:///x"}`, "has no host"},
		{"http", `{"url": "http://1.2.3.256/"}`, "not a valid IPv4 address"},
		{"http", `{"url": "http://a/", "method": "TRACE"}`, "method: \"TRACE\""},
		{"http", `{"url": "http://a/", "headers": {"Host": "b"}}`, "headers: Host is set by the handler"},
		{"http", `{"url": "http://a/", "headers": {"X": "a\r\nB: c"}}`, "line break"},
		{"http", `{"url": "http://a/", "headers": {"X Y": "a"}}`, "not a valid header name"},
		{"http", `{"url": "http://a/", "timeout_ms": -1}`, "timeout_ms: -1"},
		{"http", `{"url": "http://a/", "max_redirects": 11}`, "max_redirects: 11"},
		{"http", `{"url": "http://a/", "outcomes": {"6xx": "fail"}}`, "outcomes: key \"6xx\""},
		{"http", `{"url": "http://a/", "outcomes": {"5xx": "ignore"}}`, "use success, retry or fail"},
		{"sql", `{"statement": "SELECT 1"}`, "datasource: required"},
		{"sql", `{"datasource": "biz"}`, "statement: required"},
		{"sql", `{"datasource": "biz", "statement": "DELETE FROM t; DROP TABLE t"}`, "one statement only"},
		{"sql", `{"datasource": "biz", "statement": "SELECT 'x"}`, "is not closed"},
		{"sql", `{"datasource": "biz", "statement": "SELECT ?", "args": []}`, "1 ? placeholders but args has 0"},
		{"sql", `{"datasource": "biz", "statement": "SELECT :nope"}`, ":nope is neither a task value"},
		{"sql", `{"datasource": "biz", "statement": "SELECT :slot", "named": {"slot": 1}}`, `"slot" is set by the handler`},
		{"sql", `{"datasource": "biz", "statement": "SELECT 1", "named": {"x": 1}}`, `"x" is not used`},
		{"sql", `{"datasource": "biz", "statement": "SELECT ?", "args": [[1]]}`, "args[0]: want a string, number, boolean or null, not a JSON array"},
		{"sql", `{"datasource": "biz", "statement": "SELECT ?1", "args": [1]}`, "numbered placeholders"},
		{"shell", `{"command": "rm"}`, "command: \"rm\": want a clean absolute path"},
		{"shell", `{"command": "/bin/x", "retry_exit_codes": [0]}`, "retry_exit_codes: 0"},
		{"shell", `{"command": "/bin/x", "timeout_ms": 90000000}`, "timeout_ms: 90000000"},
	} {
		err := ValidateParams(bad.handler, bad.params)
		require.ErrorContains(t, err, bad.want, bad.params)
		var pe *ParamsError
		require.ErrorAs(t, err, &pe)
	}
}

// FuzzValidateParams: no input panics any parser, and what the sql parser
// accepts binds exactly as many values as its statement has placeholders.
func FuzzValidateParams(f *testing.F) {
	for _, s := range []string{
		`{"url": "http://127.1:80/x?{slot}", "headers": {"A": "b"}, "outcomes": {"5xx": "retry"}}`,
		`{"datasource": "biz", "statement": "UPDATE t SET a = ? WHERE b = :slot -- :c", "args": [1]}`,
		`{"command": "/bin/echo", "args": ["{slot}"], "retry_exit_codes": [75]}`,
		`{"url": "http://[::ffff:127.0.0.1]/"}`, `{}`, ``, `null`, `[1]`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, params string) {
		for _, h := range []string{NameHTTP, NameSQL, NameShell, "other"} {
			_ = ValidateParams(h, params)
		}
		for _, d := range []dialect{dialectMySQL, dialectSQLite} {
			p, err := decodeSQLParams(params)
			if err != nil || p.compile(d) != nil {
				continue
			}
			if got := strings.Count(p.compiled, "?"); got < len(p.refs) {
				t.Fatalf("%s: %q compiled to %q with %d refs", d, p.Statement, p.compiled, len(p.refs))
			}
			positional := 0
			for _, r := range p.refs {
				if r.name == "" {
					positional++
				}
			}
			if positional != len(p.args) {
				t.Fatalf("%s: %d positional refs, %d args", d, positional, len(p.args))
			}
			if ValidateParams(NameSQL, params) != nil {
				t.Fatalf("%s accepts %q, ValidateParams does not", d, params)
			}
		}
	})
}

// TestProblemsOnlyTheExecutorMeets: the problems the admin's validation
// cannot meet (a check of the executor's own configuration, SQLite's
// tokenizer, a host url.Parse refuses first) render from Problems with
// their codes like the others (admin/jobdef's TestBuiltinParamsAreCodes
// meets the rest).
func TestProblemsOnlyTheExecutorMeets(t *testing.T) {
	t.Parallel()
	_, _, err := literalIP("fe80::zz")
	require.EqualError(t, err, `host "fe80::zz" is not a valid IPv6 address`)
	_, _, err = literalIP("fe80::1%eth0")
	require.ErrorIs(t, err, ErrRefused, "a refusal of the policy")
	require.EqualError(t, err, `refused by the executor's policy: host "fe80::1%eth0": addresses with an IPv6 zone are not allowed`)

	h, err := NewHTTP(HTTPConfig{MaxTimeout: time.Second})
	require.NoError(t, err)
	err = h.Handle(context.Background(), &sdk.Task{SlotCount: 1, Params: `{"url": "http://a.example/", "timeout_ms": 2000}`})
	var pe *ParamsError
	require.ErrorAs(t, err, &pe)
	require.Equal(t, "params.timeout_executor", pe.Code)
	require.Equal(t, map[string]any{"value": "2000", "max": "1s"}, pe.Args)
	require.EqualError(t, err, "http handler params: timeout_ms: 2000 ms exceeds this executor's maximum of 1s")

	err = sqliteOneStatement(strings.Repeat("';'", sqliteMaxSemicolons+1))
	require.ErrorAs(t, err, &pe)
	require.Equal(t, "sql.sqlite_semicolons", pe.Code)
	require.EqualError(t, err, "sql handler params: statement: 257 ';' characters inside literals or comments, at most 256 on a SQLite data source: pass such text as an argument")

	pe = paramsErrFrom(NameSQL, "statement", errors.New("not one of ours"))
	require.Equal(t, "error", pe.Code, "an error that is no problem keeps its text")
	require.Equal(t, "sql handler params: statement: not one of ours", pe.Error())

	require.Panics(t, func() { _ = paramsErr(NameSQL, "", "sql.no_such_problem") }, "a code Problems does not have")
}
