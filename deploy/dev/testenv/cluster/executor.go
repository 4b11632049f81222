package cluster

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/deploy/dev/testenv"
)

// ExecutorOpts says how to start `shardjob-executor`. Zero fields leave
// their flag out (the executor's default), except App, Admins and Capacity.
type ExecutorOpts struct {
	App      string
	Admins   string // --admins: comma-separated base URLs
	Capacity int
	// Heartbeat is --heartbeat-interval.
	Heartbeat time.Duration
	// InstanceID is --instance-id.
	InstanceID string
	// DrainTimeout is --drain-timeout.
	DrainTimeout time.Duration
	// LogLevel is --log-level ("debug" prints the "slot started" lines).
	LogLevel string
	// Args are more flags.
	Args []string
	// Secret is the executor secret (SHARDJOB_SECRET).
	Secret string
	// StartTimeout bounds the wait for "listening at"; 0 is
	// DefaultStartTimeout.
	StartTimeout time.Duration
	// LogDir, when set, receives the whole output as LogDir/LogName.log
	// (LogName defaults to the InstanceID).
	LogDir, LogName string
}

// Executor is a shardjob-executor process.
type Executor struct {
	*Proc
	Name string // its instance id
	App  string
	URL  string // where it listens for pushes from the admin
	ID   int64  // the admin's id for it, once WaitOnline saw it
}

// StartExecutor starts an executor and waits until it listens (not until
// the admin knows it: Cluster.WaitOnline). Start errors stop the test.
func StartExecutor(t testing.TB, o ExecutorOpts) *Executor {
	t.Helper()
	bin := testenv.BuildBinary(t, ExecutorPkg)
	args := []string{"--app", o.App, "--admins", o.Admins, "--capacity", strconv.Itoa(o.Capacity)}
	if o.Heartbeat > 0 {
		args = append(args, "--heartbeat-interval", o.Heartbeat.String())
	}
	if o.InstanceID != "" {
		args = append(args, "--instance-id", o.InstanceID)
	}
	if o.DrainTimeout > 0 {
		args = append(args, "--drain-timeout", o.DrainTimeout.String())
	}
	if o.LogLevel != "" {
		args = append(args, "--log-level", o.LogLevel)
	}
	name := o.LogName
	if name == "" {
		name = o.InstanceID
	}
	p := start(t, bin, append(args, o.Args...), []string{"SHARDJOB_SECRET=" + o.Secret}, o.LogDir, name)
	line, err := p.WaitForLine(Ctx(t, timeout(o.StartTimeout)), "listening at")
	require.NoError(t, err, p.Output())
	return &Executor{Proc: p, Name: o.InstanceID, App: o.App, URL: line[strings.LastIndex(line, " ")+1:]}
}
