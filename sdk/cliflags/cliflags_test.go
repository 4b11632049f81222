package cliflags_test

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/sdk/cliflags"
)

// The tests set SHARDJOB_* variables (t.Setenv): they do not run in
// parallel.

func TestFileSetsFlagsAndCommandLineWins(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "executor.conf")
	require.NoError(t, os.WriteFile(path, []byte("# executor settings\napp = billing\ncapacity = 7\n\nadmins=http://a:8080\n"), 0o600))
	t.Setenv("SHARDJOB_ADMINS", "http://from-env:8080")
	t.Setenv("SHARDJOB_TIMEOUT", "3s")
	s := cliflags.New("x", &bytes.Buffer{})
	app := s.Str("app", "", "")
	capacity := s.Num("capacity", 4, "")
	admins := s.Str("admins", "", "")
	timeout := s.Dur("timeout", time.Second, "")
	require.NoError(t, s.Parse([]string{"--config", path, "--capacity", "9"}))
	require.Equal(t, "billing", *app)
	require.Equal(t, 9, *capacity, "the command line wins over the file")
	require.Equal(t, "http://a:8080", *admins, "the file wins over the environment")
	require.Equal(t, 3*time.Second, *timeout, "the environment wins over the default")

	for content, want := range map[string]string{
		"colour = blue\n":   `line 1: unknown setting "colour"`,
		"capacity = many\n": "line 1: capacity",
		"just words\n":      "line 1: want name = value",
		"config = x\n":      `unknown setting "config"`,
	} {
		require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
		s := cliflags.New("x", &bytes.Buffer{})
		s.Num("capacity", 4, "")
		require.ErrorContains(t, s.Parse([]string{"--config=" + path}), want)
	}
	t.Setenv("SHARDJOB_CONFIG", filepath.Join(dir, "missing.conf"))
	require.ErrorContains(t, cliflags.New("x", &bytes.Buffer{}).Parse(nil), "missing.conf")
}

func TestBadEnvironmentValuesNameTheVariable(t *testing.T) {
	t.Setenv("SHARDJOB_WAIT", "soon")
	t.Setenv("SHARDJOB_COUNT", "many")
	t.Setenv("SHARDJOB_ON", "perhaps")
	s := cliflags.New("x", &bytes.Buffer{})
	s.Dur("wait", time.Second, "")
	s.Num("count", 1, "")
	s.Flag("on", false, "")
	err := s.Parse(nil)
	require.ErrorContains(t, err, `SHARDJOB_WAIT="soon": use a duration`)
	require.ErrorContains(t, err, `SHARDJOB_COUNT="many": use a whole number`)
	require.ErrorContains(t, err, `SHARDJOB_ON="perhaps": use true or false`)
	require.ErrorIs(t, err, cliflags.ErrUsage, "a bad setting is a usage error: exit status 2")
}

func TestUsageErrors(t *testing.T) {
	var out bytes.Buffer
	s := cliflags.New("x", &out)
	s.Num("n", 1, "a number")
	require.ErrorIs(t, s.Parse([]string{"--n", "x"}), cliflags.ErrUsage)
	s = cliflags.New("x", &out)
	require.ErrorIs(t, s.Parse([]string{"stray"}), cliflags.ErrUsage)
	require.Contains(t, out.String(), "unexpected arguments: [stray]")
	s = cliflags.New("x", &out)
	require.True(t, errors.Is(s.Parse([]string{"-h"}), flag.ErrHelp))
	require.Contains(t, out.String(), "(env SHARDJOB_CONFIG)")
}

func TestListsReplaceEarlierSources(t *testing.T) {
	path := filepath.Join(t.TempDir(), "executor.conf")
	require.NoError(t, os.WriteFile(path, []byte("http-allow = a.example.com,b.example.com\nsql-datasource = x=sqlite:x.db\nsql-datasource = y=sqlite:y.db\n"), 0o600))
	t.Setenv("SHARDJOB_HTTP_ALLOW", "env.example.com")
	t.Setenv("SHARDJOB_SHELL_ALLOW", "/bin/true")
	s := cliflags.New("x", &bytes.Buffer{})
	allow, sources, shell := s.List("http-allow", ",", ""), s.List("sql-datasource", "\n", ""), s.List("shell-allow", ",", "")
	require.NoError(t, s.Parse([]string{"--config", path, "--http-allow", "c.example.com", "--http-allow", "10.0.0.0/8"}))
	require.Equal(t, []string{"c.example.com", "10.0.0.0/8"}, allow.Vals, "the command line replaces the file and the environment, then adds")
	require.Equal(t, []string{"x=sqlite:x.db", "y=sqlite:y.db"}, sources.Vals, "repeated lines add up")
	require.Equal(t, []string{"/bin/true"}, shell.Vals, "the environment stands where nothing else sets it")
}

func TestNewLogger(t *testing.T) {
	var buf bytes.Buffer
	log, err := cliflags.NewLogger(&buf, "json", "warn")
	require.NoError(t, err)
	log.Info("hidden")
	log.Warn("shown")
	require.NotContains(t, buf.String(), "hidden")
	require.Contains(t, buf.String(), `"msg":"shown"`)
	_, err = cliflags.NewLogger(&buf, "xml", "info")
	require.ErrorContains(t, err, "--log-format")
	_, err = cliflags.NewLogger(&buf, "text", "loud")
	require.ErrorContains(t, err, "--log-level")
}
