package cliflags_test

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/sdk/cliflags"
)

// TestGroupsHeadTheUsage: -h lists --config first, then each group's flags
// under its heading in the order the groups were started, each flag as the
// flag package prints it, with its default as defined even when the
// config file set another value.
func TestGroupsHeadTheUsage(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.conf")
	require.NoError(t, os.WriteFile(path, []byte("zk = elsewhere:2181\n"), 0o600))
	var out bytes.Buffer
	s := cliflags.New("serve", &out)
	s.Group("Cluster")
	s.Str("zk", "", "ZooKeeper servers")
	s.Str("id", "", "replica id")
	s.Group("Empty")
	s.Group("Executors")
	s.Dur("heartbeat-interval", 2*time.Second, "heartbeat interval")
	require.True(t, errors.Is(s.Parse([]string{"--config", path, "-h"}), flag.ErrHelp))

	want := `Usage of serve:
  -config string
    	file of name = value lines setting any of these flags ('#' starts a comment; the command line wins) (env SHARDJOB_CONFIG)

Cluster:
  -id string
    	replica id (env SHARDJOB_ID)
  -zk string
    	ZooKeeper servers (env SHARDJOB_ZK)

Executors:
  -heartbeat-interval duration
    	heartbeat interval (env SHARDJOB_HEARTBEAT_INTERVAL) (default 2s)
`
	require.Equal(t, want, out.String())
}

// TestNoGroupKeepsTheFlagPackagesUsage: a Set without Group prints what
// the flag package prints.
func TestNoGroupKeepsTheFlagPackagesUsage(t *testing.T) {
	var out bytes.Buffer
	s := cliflags.New("run", &out)
	s.Num("capacity", 4, "slots")
	require.True(t, errors.Is(s.Parse([]string{"-h"}), flag.ErrHelp))
	require.True(t, strings.HasPrefix(out.String(), "Usage of run:\n  -capacity int\n"), out.String())
}
