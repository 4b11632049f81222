package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestConfigFileAndEnvironment(t *testing.T) {
	// The flag convention itself is tested in sdk/cliflags; here: the
	// executor reads its file, and a bad environment value is one line,
	// exit status 2.
	path := filepath.Join(t.TempDir(), "executor.conf")
	require.NoError(t, os.WriteFile(path, []byte("admins = http://127.0.0.1:1\nsecret = 0123456789abcdef0123456789abcdef\nmax-pending-results = -1\n"), 0o600))
	var out, errOut bytes.Buffer
	code := run([]string{"--config", path, "--app", "a"}, &out, &errOut)
	require.Equal(t, 1, code, errOut.String())
	require.Contains(t, errOut.String(), "MaxPendingResults is -1", "the file's settings reach the config")

	t.Setenv("SHARDJOB_CAPACITY", "lots")
	errOut.Reset()
	require.Equal(t, 2, run([]string{"--app", "a"}, &out, &errOut))
	require.Equal(t, "shardjob-executor: SHARDJOB_CAPACITY=\"lots\": use a whole number\n", errOut.String())
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
		"unknown driver":                  {"--sql-datasource", "billing=oracle:x"},
		"data source twice":               {"--sql-datasource", "a=sqlite:x.db", "--sql-datasource", "a=sqlite:y.db"},
	} {
		var out, errOut bytes.Buffer
		code := run(append(append([]string{}, base...), flags...), &out, &errOut)
		require.Equal(t, 2, code, "%s: %s", name, errOut.String())
		require.Regexp(t, `^shardjob-executor: (built-in handlers|--sql-datasource): `, errOut.String(), name)
		require.Equal(t, 1, bytes.Count(bytes.TrimSpace(errOut.Bytes()), []byte("\n"))+1, "%s: one line: %s", name, errOut.String())
	}
}
