package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestConfigFileSetsFlagsAndCommandLineWins(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "executor.conf")
	require.NoError(t, os.WriteFile(path, []byte("# executor settings\napp = billing\ncapacity = 7\n\nadmins=http://a:8080\n"), 0o600))
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	app := fs.String("app", "", "")
	capacity := fs.Int("capacity", 4, "")
	admins := fs.String("admins", "", "")
	fs.String("config", "", "")
	args := []string{"--config", path, "--capacity", "9"}
	require.Equal(t, path, configPath(args))
	require.NoError(t, applyConfigFile(fs, path))
	require.NoError(t, fs.Parse(args))
	require.Equal(t, "billing", *app)
	require.Equal(t, 9, *capacity, "the command line wins over the file")
	require.Equal(t, "http://a:8080", *admins)

	require.NoError(t, os.WriteFile(path, []byte("colour = blue\n"), 0o600))
	require.ErrorContains(t, applyConfigFile(fs, path), `line 1: unknown setting "colour"`)
	require.NoError(t, os.WriteFile(path, []byte("capacity = many\n"), 0o600))
	require.ErrorContains(t, applyConfigFile(fs, path), "line 1: capacity")
}

func TestMissingRequiredSettingIsOneLine(t *testing.T) {
	t.Parallel()
	var out, errOut bytes.Buffer
	code := run([]string{"--admins", "http://127.0.0.1:1"}, &out, &errOut)
	require.Equal(t, 1, code)
	require.Contains(t, errOut.String(), "App")
	require.Equal(t, 1, bytes.Count(bytes.TrimSpace(errOut.Bytes()), []byte("\n"))+1, errOut.String())
}

func TestMaxPendingResultsReachesTheConfig(t *testing.T) {
	t.Parallel()
	var out, errOut bytes.Buffer
	code := run([]string{"--app", "a", "--admins", "http://127.0.0.1:1", "--secret", "0123456789abcdef0123456789abcdef",
		"--max-pending-results", "-1"}, &out, &errOut)
	require.Equal(t, 1, code, errOut.String())
	require.Contains(t, errOut.String(), "MaxPendingResults is -1", "the flag is passed to sdk.Config, which validates it")
}

func TestBuiltinHandlerSettings(t *testing.T) {
	t.Parallel()
	base := []string{"--app", "a", "--admins", "http://127.0.0.1:1", "--secret", "0123456789abcdef0123456789abcdef"}
	for name, flags := range map[string][]string{
		"shell enabled, nothing allowed":  {"--shell-enable"},
		"relative shell program":          {"--shell-enable", "--shell-allow", "bin/tool"},
		"numeric alias in the allow-list": {"--http-allow", "127.1"},
		"data source without driver":      {"--sql-datasource", "billing"},
		"unknown driver":                  {"--sql-datasource", "billing=postgres:x"},
		"data source twice":               {"--sql-datasource", "a=sqlite:x.db", "--sql-datasource", "a=sqlite:y.db"},
	} {
		var out, errOut bytes.Buffer
		code := run(append(append([]string{}, base...), flags...), &out, &errOut)
		require.Equal(t, 2, code, "%s: %s", name, errOut.String())
		require.Regexp(t, `^shardjob-executor: (built-in handlers|--sql-datasource): `, errOut.String(), name)
		require.Equal(t, 1, bytes.Count(bytes.TrimSpace(errOut.Bytes()), []byte("\n"))+1, "%s: one line: %s", name, errOut.String())
	}
}

func TestListFlagCommandLineReplacesFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "executor.conf")
	require.NoError(t, os.WriteFile(path, []byte("http-allow = a.example.com,b.example.com\nsql-datasource = x=sqlite:x.db\nsql-datasource = y=sqlite:y.db\n"), 0o600))
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	allow, sources := &listFlag{sep: ","}, &listFlag{sep: "\n"}
	fs.Var(allow, "http-allow", "")
	fs.Var(sources, "sql-datasource", "")
	require.NoError(t, applyConfigFile(fs, path))
	allow.replaceOnNextSet()
	sources.replaceOnNextSet()
	require.NoError(t, fs.Parse([]string{"--http-allow", "c.example.com", "--http-allow", "10.0.0.0/8"}))
	require.Equal(t, []string{"c.example.com", "10.0.0.0/8"}, allow.vals, "the command line replaces the file, then adds")
	require.Equal(t, []string{"x=sqlite:x.db", "y=sqlite:y.db"}, sources.vals, "repeated lines add up")
}
