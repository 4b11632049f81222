package builtin

import (
	"context"
	"errors"
	"net/netip"
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

func TestLiteralIP(t *testing.T) {
	t.Parallel()
	for host, want := range map[string]string{
		"127.0.0.1": "127.0.0.1", "127.1": "127.0.0.1", "127.0.1": "127.0.0.1", "0x7f000001": "127.0.0.1",
		"0x7F.0x0.0x0.0x1": "127.0.0.1", "2130706433": "127.0.0.1", "017700000001": "127.0.0.1", "0177.0.0.01": "127.0.0.1",
		"0": "0.0.0.0", "0.0.0.0": "0.0.0.0", "10.1": "10.0.0.1", "192.168.257": "192.168.1.1", "4294967295": "255.255.255.255",
		"::ffff:127.0.0.1": "127.0.0.1", "::1": "::1", "127.0.0.1.": "127.0.0.1", "0x": "0.0.0.0",
	} {
		ip, ok, err := literalIP(host)
		require.NoError(t, err, host)
		require.True(t, ok, host)
		require.Equal(t, want, ip.String(), host)
	}
	for _, host := range []string{"example.com", "1.example.com", "a0x1", "0x1g", "localhost"} {
		_, ok, err := literalIP(host)
		require.NoError(t, err, host)
		require.False(t, ok, host)
	}
	for _, host := range []string{"256.0.0.1", "4294967296", "1.2.3.4.5", "08.0.0.1", "1..1", "example.1", "1.2.3.0x100", "fe80::1%eth0"} {
		_, _, err := literalIP(host)
		require.Error(t, err, host)
	}
}

func TestSpecialClass(t *testing.T) {
	t.Parallel()
	for ip, want := range map[string]string{
		"8.8.8.8": "", "2606:4700::1111": "", "93.184.215.14": "",
		"127.0.0.1": "loopback", "::1": "loopback", "10.0.0.1": "private", "172.16.0.1": "private", "192.168.1.1": "private",
		"169.254.169.254": "link-local", "fe80::1": "link-local", "fd00::1": "unique-local (fc00::/7)", "100.64.0.1": "CGNAT (100.64.0.0/10)",
		"224.0.0.1": "multicast", "ff02::1": "multicast", "0.0.0.0": "unspecified", "::": "unspecified", "255.255.255.255": "reserved (240.0.0.0/4)",
		"0.1.2.3": "\"this network\" (0.0.0.0/8)", "2002:7f00:1::": "6to4 (2002::/16)", "64:ff9b::7f00:1": "NAT64 (64:ff9b::/96)", "::7f00:1": "IPv4-compatible IPv6 (::/96)",
	} {
		require.Equal(t, want, specialClass(netip.MustParseAddr(ip).Unmap()), ip)
	}
	a, err := parseAllowList([]string{"10.0.0.0/8", "::ffff:192.168.0.0/112", "api.example.com", "*.corp.example"})
	require.NoError(t, err)
	require.NoError(t, a.permit("", netip.MustParseAddr("10.9.9.9")), "allow-listed CIDR reaches a private address")
	require.NoError(t, a.permit("anything.test", netip.MustParseAddr("192.168.3.4")), "mapped CIDR is unmapped")
	require.NoError(t, a.permit("api.example.com", netip.MustParseAddr("8.8.8.8")))
	require.NoError(t, a.permit("x.corp.example", netip.MustParseAddr("8.8.8.8")))
	require.ErrorIs(t, a.permit("corp.example", netip.MustParseAddr("8.8.8.8")), ErrRefused, "*.d is subdomains only")
	require.ErrorIs(t, a.permit("api.example.com", netip.MustParseAddr("127.0.0.1")), ErrRefused, "a host name does not unlock loopback")
	require.ErrorIs(t, a.permit("", netip.MustParseAddr("8.8.8.8")), ErrRefused, "a public IP literal needs * or its CIDR")
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

// FuzzHost: numeric host parsing never panics, agrees with netip on strict
// forms, and whatever it reads as an address is valid.
func FuzzHost(f *testing.F) {
	for _, s := range []string{"127.1", "0x7f000001", "2130706433", "0177.0.0.1", "::ffff:127.0.0.1", "a.b", "1.2.3.4.", "0x", "09"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, host string) {
		ip, ok, err := literalIP(host)
		if err != nil {
			return
		}
		if ok && !ip.IsValid() {
			t.Fatalf("%q: invalid address", host)
		}
		if strict, perr := netip.ParseAddr(host); perr == nil && strict.Zone() == "" && (!ok || ip != strict.Unmap()) {
			t.Fatalf("%q: read as %v (%v), netip says %v", host, ip, ok, strict)
		}
		_, _ = parseAllowList([]string{host})
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
	err = h.Handle(context.Background(), &sdk.Task{Total: 1, Params: `{"url": "http://a.example/", "timeout_ms": 2000}`})
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
