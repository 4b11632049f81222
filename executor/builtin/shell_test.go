//go:build unix

package builtin_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/executor/builtin"
	"github.com/shardjob/shardjob/sdk"
)

func newShell(t *testing.T, cfg builtin.ShellConfig) *builtin.Shell {
	t.Helper()
	s, err := builtin.NewShell(cfg)
	require.NoError(t, err)
	return s
}

// script writes an executable /bin/sh script into a temporary directory.
func script(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "job.sh")
	require.NoError(t, os.WriteFile(path, []byte("#!/bin/sh\n"+body), 0o700))
	return path
}

func TestShellDisabledRefusesEverything(t *testing.T) {
	t.Parallel()
	s := newShell(t, builtin.ShellConfig{Allow: []string{"/bin/echo"}})
	task, _ := newTask(`{"command": "/bin/echo"}`)
	err := s.Handle(context.Background(), task)
	require.ErrorIs(t, err, builtin.ErrRefused)
	require.ErrorContains(t, err, "the shell handler is disabled on this executor")
	require.ErrorContains(t, err, "--shell-enable")

	_, err = builtin.NewShell(builtin.ShellConfig{Enabled: true})
	require.ErrorContains(t, err, "empty allow-list")
	_, err = builtin.NewShell(builtin.ShellConfig{Enabled: true, Allow: []string{"echo"}})
	require.ErrorContains(t, err, "clean absolute path")
}

func TestShellRefusesWhatIsNotAllowListed(t *testing.T) {
	t.Parallel()
	s := newShell(t, builtin.ShellConfig{Enabled: true, Allow: []string{"/bin/echo"}})
	for params, want := range map[string]string{
		`{"command": "/bin/sh", "args": ["-c", "id"]}`:                 `"/bin/sh" is not on this executor's allow-list (--shell-allow /bin/echo)`,
		`{"command": "/bin/../bin/echo"}`:                              "clean absolute path",
		`{"command": "echo"}`:                                          "clean absolute path",
		`{"command": "/bin/echo; id"}`:                                 "not on this executor's allow-list",
		`{"command": "/bin/echo", "env": {"LD_PRELOAD": "/tmp/x.so"}}`: `unknown field "env"`,
	} {
		task, _ := newTask(params)
		require.ErrorContains(t, s.Handle(context.Background(), task), want, params)
	}
}

func TestShellRunsAllowListedCommand(t *testing.T) {
	t.Parallel()
	s := newShell(t, builtin.ShellConfig{Enabled: true, Allow: []string{"/bin/echo"}})
	task, log := newTask(`{"command": "/bin/echo", "args": ["hello", "{slot}/{total}", "$HOME;|"]}`)
	require.NoError(t, s.Handle(context.Background(), task))
	require.Contains(t, log.String(), `msg="shell stdout" line="hello 3/8 $HOME;|"`, "argv, no shell")
	processed, _, _, _ := task.Counts()
	require.EqualValues(t, 1, processed)

	task, log = newTask(`{"command": "/bin/echo", "args": ["slot", "total:"]}`)
	require.NoError(t, s.Handle(context.Background(), task))
	require.Contains(t, log.String(), `line="slot total: 3 8"`, "without placeholders slot and total are appended")
}

func TestShellEnvironmentOutputAndExitCodes(t *testing.T) { // not parallel: t.Setenv
	path := script(t, `echo "slot=$SHARDJOB_SLOT total=$SHARDJOB_TOTAL run=$SHARDJOB_RUN_ID secret=$SHARDJOB_SECRET args=$*"
echo "to stderr" >&2
printf 'no newline'
exit "$1"
`)
	t.Setenv("SHARDJOB_SECRET", "s3cret") // the executor's environment is not passed on
	s := newShell(t, builtin.ShellConfig{Enabled: true, Allow: []string{path}})

	task, log := newTask(`{"command": "` + path + `", "args": ["0", "{slot}"]}`)
	require.NoError(t, s.Handle(context.Background(), task))
	require.Contains(t, log.String(), `line="slot=3 total=8 run=42 secret= args=0 3"`)
	require.Contains(t, log.String(), `msg="shell stderr" line="to stderr"`)
	require.Contains(t, log.String(), `line="no newline"`)
	require.NotContains(t, log.String(), "s3cret")

	task, _ = newTask(`{"command": "` + path + `", "args": ["75"], "retry_exit_codes": [75]}`)
	err := s.Handle(context.Background(), task)
	require.True(t, builtin.IsRetryable(err), "%v", err)
	require.ErrorContains(t, err, "exit code 75")

	task, _ = newTask(`{"command": "` + path + `", "args": ["3"], "retry_exit_codes": [75]}`)
	err = s.Handle(context.Background(), task)
	require.ErrorContains(t, err, "exit code 3")
	require.False(t, builtin.IsRetryable(err))

	task, _ = newTask(`{"command": "` + path + `", "args": ["3"], "success_exit_codes": [3]}`)
	require.NoError(t, s.Handle(context.Background(), task))
}

func TestShellOutputIsCapped(t *testing.T) {
	t.Parallel()
	path := script(t, `i=0
while [ $i -lt 50 ]; do echo "line $i"; i=$((i+1)); done
head -c 300 /dev/zero | tr '\0' 'y'; echo
`)
	s := newShell(t, builtin.ShellConfig{Enabled: true, Allow: []string{path}, MaxLogLines: 10, MaxLineBytes: 40})
	task, log := newTask(`{"command": "` + path + `", "args": ["{slot}"]}`)
	require.NoError(t, s.Handle(context.Background(), task))
	out := log.String()
	require.Contains(t, out, `line="line 9"`)
	require.NotContains(t, out, `line="line 10"`)
	require.Contains(t, out, "line limit reached")
	require.Contains(t, out, "output_lines=51 output_lines_not_logged=41")

	s = newShell(t, builtin.ShellConfig{Enabled: true, Allow: []string{path}, MaxLineBytes: 40})
	task, log = newTask(`{"command": "` + path + `", "args": ["{slot}"]}`)
	require.NoError(t, s.Handle(context.Background(), task))
	require.Contains(t, log.String(), `line=`+strings.Repeat("y", 40)+`… line_cut=true`)
}

// TestShellCancellationKillsTheProcessGroup starts a script that leaves a
// child holding a FIFO open (one that ignores SIGTERM, one that does not);
// the FIFO reaches EOF only when the child is dead.
func TestShellCancellationKillsTheProcessGroup(t *testing.T) {
	t.Parallel()
	for name, child := range map[string]string{
		"sigterm":             `/bin/sh -c 'echo up; exec /bin/sleep 1000'`,
		"sigkill after grace": `/bin/sh -c 'trap "" TERM; echo up; exec /bin/sleep 1000'`,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			fifo := filepath.Join(dir, "alive")
			require.NoError(t, syscall.Mkfifo(fifo, 0o600))
			path := script(t, child+` > "$1" &
echo started
wait
`)
			s := newShell(t, builtin.ShellConfig{Enabled: true, Allow: []string{path}, KillGrace: 200 * time.Millisecond})
			up, eof := make(chan struct{}), make(chan error, 1)
			go func() {
				f, err := os.Open(fifo) // blocks until the child opens it for writing
				if err == nil {
					r := bufio.NewReader(f)
					if _, err = r.ReadString('\n'); err == nil {
						close(up) // the child holds the FIFO and is past its trap
						_, err = io.Copy(io.Discard, r)
					}
					_ = f.Close()
				}
				eof <- err
			}()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			task, log := newTask(`{"command": "` + path + `", "args": ["` + fifo + `"]}`)
			started := log.Watch(`line=started`)
			done := make(chan error, 1)
			go func() { done <- s.Handle(ctx, task) }()
			wait(t, started, "the script to start")
			wait(t, up, "the child to open the FIFO")
			cancel()
			var err error
			select {
			case err = <-done:
			case <-time.After(waitTimeout):
				t.Fatal("Handle did not return after cancellation")
			}
			require.ErrorIs(t, err, context.Canceled)
			require.ErrorContains(t, err, "process group killed")
			select {
			case err := <-eof:
				require.NoError(t, err, "the child closed the FIFO: it is dead")
			case <-time.After(waitTimeout):
				t.Fatalf("the child holding %s survived the cancellation", fifo)
			}
		})
	}
}

// TestShellWorkflowContext (issue 30): a workflow node's shell command
// gets the workflow context in its placeholders and environment; outside
// a workflow the placeholders are empty and the variables absent.
func TestShellWorkflowContext(t *testing.T) {
	t.Parallel()
	path := script(t, `echo "args=$* date=${SHARDJOB_BUSINESS_DATE-unset} node=${SHARDJOB_WORKFLOW_NODE-unset} run=${SHARDJOB_WORKFLOW_RUN_ID-unset} ctx=${SHARDJOB_WORKFLOW-unset}"
`)
	s := newShell(t, builtin.ShellConfig{Enabled: true, Allow: []string{path}})
	params := `{"command": "` + path + `", "args": ["[{business_date}]", "[{workflow_node}]", "[{workflow_run_id}]"]}`

	task, log := newTask(params)
	require.NoError(t, s.Handle(context.Background(), task))
	require.Contains(t, log.String(), `line="args=[] [] [] date=unset node=unset run=unset ctx=unset"`)

	task, log = newTask(params)
	task.Workflow = &sdk.WorkflowContext{RunID: 17, Node: "settle", BusinessDate: "2026-03-02",
		Upstream: map[string]json.RawMessage{"load": json.RawMessage(`{"rows":42}`)}}
	require.NoError(t, s.Handle(context.Background(), task))
	require.Contains(t, log.String(), `args=[2026-03-02] [settle] [17] date=2026-03-02 node=settle run=17 `+
		`ctx={\"run_id\":17,\"node\":\"settle\",\"business_date\":\"2026-03-02\",\"upstream\":{\"load\":{\"rows\":42}}}`)
}

// The error classes of the shell handler (docs/failures.md): with
// retry_exit_codes, the listed codes are retryable and any other non-zero
// code permanent (an empty list: every failure permanent); without the
// field, every failure stays retryable, as before error classes.
func TestShellExitCodeClasses(t *testing.T) {
	t.Parallel()
	path := script(t, `exit "$1"
`)
	s := newShell(t, builtin.ShellConfig{Enabled: true, Allow: []string{path}})
	for _, tc := range []struct {
		code, retry string
		class       string
	}{
		{"75", `, "retry_exit_codes": [75, 111]`, "retryable"},
		{"111", `, "retry_exit_codes": [75, 111]`, "retryable"},
		{"3", `, "retry_exit_codes": [75, 111]`, "permanent"},
		{"1", `, "retry_exit_codes": []`, "permanent"},
		{"3", ``, "retryable"},
		{"1", ``, "retryable"},
	} {
		task, _ := newTask(`{"command": "` + path + `", "args": ["` + tc.code + `"]` + tc.retry + `}`)
		err := s.Handle(context.Background(), task)
		require.ErrorContains(t, err, "exit code "+tc.code)
		class, _ := classOf(err)
		require.Equal(t, tc.class, class, "exit %s%s: %v", tc.code, tc.retry, err)
	}
}
