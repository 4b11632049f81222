package cluster

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/cli"
	"github.com/shardjob/shardjob/deploy/dev/testenv"
)

// The main packages of the binaries, for testenv.BuildBinary.
const (
	AdminPkg    = "github.com/shardjob/shardjob/admin/cmd/shardjob-admin"
	ExecutorPkg = "github.com/shardjob/shardjob/executor/cmd/shardjob-executor"
)

// DefaultStartTimeout is how long a process may take to serve or listen
// when the options name no timeout: binaries built with -race, on a 2-core
// machine shared with other tests.
const DefaultStartTimeout = 90 * time.Second

// PasswordRE finds the console password the first start of an admin prints.
var PasswordRE = regexp.MustCompile(`with password (\S+)`)

// AdminOpts says how to start `shardjob-admin serve`.
type AdminOpts struct {
	// ID is the --id of the replica; "{port}" in it is replaced by the
	// HTTP port.
	ID string
	// Args are the flags after serve --http-addr <addr> --id <id>: the
	// store, the coordinator, intervals.
	Args []string
	// Secret is the executor secret (SHARDJOB_EXECUTOR_SECRET).
	Secret string
	// StartTimeout bounds the wait for "serving at"; 0 is
	// DefaultStartTimeout.
	StartTimeout time.Duration
	// LogDir, when set, receives the whole output as LogDir/LogName.log
	// (LogName defaults to the ID).
	LogDir, LogName string
}

// Admin is an admin process and the base URL of its HTTP server.
type Admin struct {
	*Proc
	URL string
}

// StartAdmin starts `shardjob-admin serve` on a free port of 127.0.0.1 and
// waits until it serves. Start errors stop the test.
func StartAdmin(t testing.TB, o AdminOpts) *Admin {
	t.Helper()
	bin := testenv.BuildBinary(t, AdminPkg)
	port := strconv.Itoa(testenv.FreePort(t))
	id := strings.ReplaceAll(o.ID, "{port}", port)
	name := o.LogName
	if name == "" {
		name = id
	}
	p := start(t, bin, append([]string{"serve", "--http-addr", "127.0.0.1:" + port, "--id", id}, o.Args...),
		[]string{"SHARDJOB_EXECUTOR_SECRET=" + o.Secret}, o.LogDir, name)
	_, err := p.WaitForLine(Ctx(t, timeout(o.StartTimeout)), "serving at")
	require.NoError(t, err)
	return &Admin{Proc: p, URL: "http://127.0.0.1:" + port}
}

// StartStandalone starts `shardjob-admin standalone --data-dir dataDir
// --http-addr 127.0.0.1:port` with more args and waits until it is ready
// (60s).
func StartStandalone(t testing.TB, dataDir string, port int, args ...string) *Admin {
	t.Helper()
	bin := testenv.BuildBinary(t, AdminPkg)
	addr := "127.0.0.1:" + strconv.Itoa(port)
	p := start(t, bin, append([]string{"standalone", "--data-dir", dataDir, "--http-addr", addr}, args...), nil, "", "")
	_, err := p.WaitForLine(Ctx(t, 60*time.Second), "standalone mode ready")
	require.NoError(t, err, p.Output())
	return &Admin{Proc: p, URL: "http://" + addr}
}

// Password returns the console password of the user admin that the first
// start of a admin printed.
func (a *Admin) Password(t testing.TB) string {
	t.Helper()
	m := PasswordRE.FindStringSubmatch(a.Stdout())
	require.NotNil(t, m, "the first start prints the console password: %s", a.Output())
	return m[1]
}

// Login returns a client of a logged in as admin with the printed password.
func (a *Admin) Login(t testing.TB) *cli.Client {
	t.Helper()
	c := NewClient(a.URL)
	require.NoError(t, c.Login(context.Background(), "admin", a.Password(t)))
	return c
}

func timeout(d time.Duration) time.Duration {
	if d == 0 {
		return DefaultStartTimeout
	}
	return d
}
