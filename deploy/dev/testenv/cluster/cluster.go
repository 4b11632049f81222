package cluster

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/cli"
	"github.com/shardjob/shardjob/deploy/dev/testenv"
)

// DefaultWaitTimeout bounds the waits on runs and attempts when the
// cluster names no timeout.
const DefaultWaitTimeout = 120 * time.Second

// Cluster is an admin that leads (more replicas may join), the executors a
// test started, and a logged-in API client. Its methods fail T.
type Cluster struct {
	T testing.TB
	// Admin is the first admin, API its client logged in as admin.
	Admin *Admin
	API   *cli.Client
	// AdminOpts start the replicas (StartAdmin); "{name}" in their ID is
	// the replica's name.
	AdminOpts AdminOpts
	// Exec holds the defaults of StartExecutor; Admins, when empty, is the
	// first admin's URL and Secret the admins' secret.
	Exec ExecutorOpts
	// WaitTimeout bounds WaitRunEnded and WaitAttempts; 0 is
	// DefaultWaitTimeout.
	WaitTimeout time.Duration

	execs *[]*Executor // every executor started, shared by the copies of In
}

// New starts the first admin with o (named first, for "{name}" and the log
// file), waits until it leads (the scheduler runs) and logs in.
func New(t testing.TB, first string, o AdminOpts) *Cluster {
	t.Helper()
	c := &Cluster{T: t, AdminOpts: o, execs: new([]*Executor)}
	c.Admin = c.StartAdmin(first)
	_, err := c.Admin.WaitForLine(Ctx(t, timeout(o.StartTimeout)), "msg=leading")
	require.NoError(t, err)
	c.API = c.Admin.Login(t)
	return c
}

// In returns the cluster for the subtest t: its methods fail t, and the
// processes they start are stopped when t ends.
func (c *Cluster) In(t testing.TB) *Cluster {
	cc := *c
	cc.T = t
	return &cc
}

// StartAdmin starts one more replica with the cluster's AdminOpts.
func (c *Cluster) StartAdmin(name string) *Admin {
	c.T.Helper()
	o := c.AdminOpts
	o.ID = strings.ReplaceAll(o.ID, "{name}", name)
	o.LogName = name
	return StartAdmin(c.T, o)
}

// StartExecutor starts an executor with o, whose zero fields take the
// cluster's defaults (Exec), and waits until it listens.
func (c *Cluster) StartExecutor(o ExecutorOpts) *Executor {
	c.T.Helper()
	d := c.Exec
	if o.App == "" {
		o.App = d.App
	}
	if o.Admins == "" {
		o.Admins = d.Admins
		if o.Admins == "" {
			o.Admins = c.API.Base
		}
	}
	if o.Capacity == 0 {
		o.Capacity = d.Capacity
	}
	if o.Heartbeat == 0 {
		o.Heartbeat = d.Heartbeat
	}
	if o.DrainTimeout == 0 {
		o.DrainTimeout = d.DrainTimeout
	}
	if o.LogLevel == "" {
		o.LogLevel = d.LogLevel
	}
	if o.Args == nil {
		o.Args = d.Args
	}
	if o.Secret == "" {
		o.Secret = c.AdminOpts.Secret
	}
	if o.StartTimeout == 0 {
		o.StartTimeout = d.StartTimeout
	}
	if o.LogDir == "" {
		o.LogDir = d.LogDir
	}
	e := StartExecutor(c.T, o)
	*c.execs = append(*c.execs, e)
	return e
}

// Execs returns every executor started, in order.
func (c *Cluster) Execs() []*Executor { return *c.execs }

// Executors returns the registered executors by instance id.
func (c *Cluster) Executors() (map[string]ExecutorView, error) {
	var out struct {
		Executors []ExecutorView `json:"executors"`
	}
	if err := c.API.Do(context.Background(), http.MethodGet, "/api/v1/executors", nil, &out); err != nil {
		return nil, err
	}
	m := make(map[string]ExecutorView, len(out.Executors))
	for _, e := range out.Executors {
		m[e.InstanceID] = e
	}
	return m, nil
}

// WaitOnline waits until the admin lists every one of execs as online and
// records their ids.
func (c *Cluster) WaitOnline(execs ...*Executor) {
	c.T.Helper()
	testenv.WaitFor(c.T, timeout(c.AdminOpts.StartTimeout), func() (bool, error) {
		list, err := c.Executors()
		if err != nil {
			return false, err
		}
		for _, e := range execs {
			v, ok := list[e.Name]
			if !ok || v.State != "online" {
				return false, fmt.Errorf("executor %s is not online: %+v", e.Name, v)
			}
			e.ID = v.ID
		}
		return true, nil
	}, "executors did not come online")
}

// CreateJob creates a job and returns its id.
func (c *Cluster) CreateJob(spec apitypes.JobSpec) int64 {
	c.T.Helper()
	var job apitypes.Job
	code, err := c.API.Call(context.Background(), http.MethodPost, "/api/v1/jobs", spec, &job)
	require.NoError(c.T, err)
	require.Equal(c.T, http.StatusCreated, code)
	return job.ID
}

// Trigger starts a run of the job with the request body in (nil: now,
// with the job's parameters). A repeat of a firing returns the existing
// run (created false, status 200 instead of 201).
func (c *Cluster) Trigger(jobID int64, in any) (apitypes.Run, bool) {
	c.T.Helper()
	var out struct {
		Run     apitypes.Run `json:"run"`
		Created bool         `json:"created"`
	}
	code, err := c.API.Call(context.Background(), http.MethodPost, fmt.Sprintf("/api/v1/jobs/%d/trigger", jobID), in, &out)
	require.NoError(c.T, err)
	if out.Created {
		require.Equal(c.T, http.StatusCreated, code)
	} else {
		require.Equal(c.T, http.StatusOK, code)
	}
	return out.Run, out.Created
}

// Run returns a run and every attempt of every slot.
func (c *Cluster) Run(id int64) (apitypes.Run, []apitypes.Attempt, error) {
	var out apitypes.RunDetail
	err := c.API.Do(context.Background(), http.MethodGet, fmt.Sprintf("/api/v1/runs/%d", id), nil, &out)
	return out.Run, out.Attempts, err
}

// WaitRunEnded waits until the run is terminal and returns it with its
// attempts. While it is not, pending (when not nil) describes the state,
// and may stop the test early; the default names the run's status and its
// current attempts by status.
func (c *Cluster) WaitRunEnded(id int64, pending func(r apitypes.Run, atts []apitypes.Attempt) error) (apitypes.Run, []apitypes.Attempt) {
	c.T.Helper()
	var r apitypes.Run
	var atts []apitypes.Attempt
	testenv.WaitFor(c.T, c.waitTimeout(), func() (bool, error) {
		var err error
		r, atts, err = c.Run(id)
		if err != nil || Terminal[r.Status] {
			return err == nil, err
		}
		if pending != nil {
			return false, pending(r, atts)
		}
		byStatus := map[string]int{}
		for _, a := range atts {
			if a.Current {
				byStatus[a.Status]++
			}
		}
		return false, fmt.Errorf("run %d is %s (%d/%d slots succeeded, %d failed); current attempts by status %v",
			id, r.Status, r.SlotsSucceeded, r.SlotCount, r.SlotsFailed, byStatus)
	}, fmt.Sprintf("run %d did not end", id))
	return r, atts
}

// WaitAttempts waits until cond holds for the run's attempts, and returns
// them.
func (c *Cluster) WaitAttempts(runID int64, what string, cond func(atts []apitypes.Attempt) error) []apitypes.Attempt {
	c.T.Helper()
	var atts []apitypes.Attempt
	testenv.WaitFor(c.T, c.waitTimeout(), func() (bool, error) {
		var err error
		if _, atts, err = c.Run(runID); err != nil {
			return false, err
		}
		if err := cond(atts); err != nil {
			return false, err
		}
		return true, nil
	}, what)
	return atts
}

func (c *Cluster) waitTimeout() time.Duration {
	if c.WaitTimeout == 0 {
		return DefaultWaitTimeout
	}
	return c.WaitTimeout
}
