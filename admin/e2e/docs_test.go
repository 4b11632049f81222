package e2e

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/deploy/dev/testenv"
	harness "github.com/shardjob/shardjob/deploy/dev/testenv/cluster"
)

const ctlPkg = "github.com/shardjob/shardjob/admin/cmd/shardjobctl"

// notRun marks a shell example that the test does not run: the line right
// before its fence is `<!-- example: not run (the reason) -->`.
const notRun = "<!-- example: not run ("

// runTwice marks a shell example that a reader may well run again (the
// README's API block: the second time the first password's file is gone
// and the job it creates exists): the line right before its fence is
// `<!-- example: run twice (why) -->`, and the test runs it twice.
const runTwice = "<!-- example: run twice ("

// example is one ```sh block of a Markdown file.
type example struct {
	file   string
	line   int // of the opening fence
	script string
	skip   string // the reason it is not run, or ""
	twice  bool   // run it a second time (runTwice)
}

// shellExamples reads the ```sh blocks of README.md and docs/*.md, in that
// order.
func shellExamples(t *testing.T, root string) []example {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	require.NoError(t, err)
	files = append([]string{filepath.Join(root, "README.md")}, files...)
	var out []example
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		rel, _ := filepath.Rel(root, f)
		var cur *example
		var prev string
		sc := bufio.NewScanner(bytes.NewReader(data))
		for n := 1; sc.Scan(); n++ {
			line := sc.Text()
			switch {
			case cur == nil && (line == "```sh" || line == "```bash" || line == "```shell"):
				cur = &example{file: rel, line: n}
				if strings.HasPrefix(prev, notRun) {
					cur.skip = strings.TrimSuffix(strings.TrimPrefix(prev, notRun), ") -->")
					require.NotEmpty(t, strings.TrimSpace(cur.skip), "%s:%d: say why the example is not run", rel, n)
				}
				cur.twice = strings.HasPrefix(prev, runTwice)
			case cur != nil && line == "```":
				out = append(out, *cur)
				cur = nil
			case cur != nil:
				cur.script += line + "\n"
			}
			prev = line
		}
		require.Nil(t, cur, "%s: a shell block is not closed", rel)
	}
	return out
}

// TestDocExamplesRun runs every shell example of the README and docs/ as a
// reader would, against a standalone admin started like `make run` (its data
// in ./data of the examples' working directory, its address put in place of
// 127.0.0.1:8080 and localhost:8080), with shardjobctl on the PATH and
// PASSWORD set to the admin's first password. Each example runs in its own
// `bash -euo pipefail`, in file order; an example that must not run says why
// in a marker (notRun). The README quick start runs first: it reads the
// password from data/admin.password, as its text says. An example marked
// runTwice runs a second time right after the first, as a reader trying
// it again would (the README's API block: by then the password file is
// gone — the first login removed it — and its job exists).
func TestDocExamplesRun(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	examples := shellExamples(t, root)

	ctlBin := testenv.BuildBinary(t, ctlPkg)
	binDir := t.TempDir()
	require.NoError(t, os.Symlink(ctlBin, filepath.Join(binDir, "shardjobctl")))
	work := t.TempDir()
	port := testenv.FreePort(t)
	addr := "127.0.0.1:" + strconv.Itoa(port)
	admin := harness.StartStandalone(t, filepath.Join(work, "data"), port)
	password := admin.Password(t)

	ran, again := 0, 0
	for _, ex := range examples {
		where := fmt.Sprintf("%s:%d", ex.file, ex.line)
		if ex.skip != "" {
			t.Logf("%s: not run: %s", where, ex.skip)
			continue
		}
		script := strings.NewReplacer("127.0.0.1:8080", addr, "localhost:8080", addr).Replace(ex.script)
		times := 1
		if ex.twice {
			times = 2
		}
		for i := 1; i <= times; i++ {
			stdout, stderr, err := runExample(work, binDir, password, script)
			if err != nil {
				t.Errorf("%s: the example failed on run %d of %d (%v):\n%s\nstdout:\n%s\nstderr:\n%s", where, i, times, err, ex.script, stdout, stderr)
				break
			}
			t.Logf("%s: ran (%d of %d), %d bytes of output", where, i, times, len(stdout))
			ran++
			if i == 2 {
				again++
			}
		}
	}
	require.GreaterOrEqual(t, ran, 2, "the README's and cli.md's examples at least")
	require.GreaterOrEqual(t, again, 1, "the README's API block ran a second time")
}

// runExample runs script as a reader would: bash -euo pipefail in work,
// shardjobctl (in binDir) on the PATH, PASSWORD set.
func runExample(work, binDir, password, script string) (stdout, stderr string, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", script)
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "PATH="+binDir+string(os.PathListSeparator)+os.Getenv("PATH"), "PASSWORD="+password,
		"HOME="+work, "XDG_CONFIG_HOME="+filepath.Join(work, ".config"))
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	return out.String(), errb.String(), err
}
