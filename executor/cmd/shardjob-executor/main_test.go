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
