package standalone

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/cli"
	"github.com/shardjob/shardjob/deploy/dev/testenv"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// started is one standalone process-in-a-goroutine.
type started struct {
	url  string
	out  *testenv.Buffer // what the operator sees on stdout
	logs *testenv.Buffer // slog JSON lines, info and above
	stop func()
}

// start runs standalone mode on dir until the test stops it (or ends).
func start(t *testing.T, dir string) *started {
	t.Helper()
	s := &started{out: &testenv.Buffer{}, logs: &testenv.Buffer{}}
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, Config{
			DataDir: dir, HTTPAddr: "127.0.0.1:0", Out: s.out,
			Logger: slog.New(slog.NewJSONHandler(s.logs, &slog.HandlerOptions{Level: slog.LevelInfo})),
			Ready:  func(url string) { ready <- url },
		})
	}()
	select {
	case s.url = <-ready:
	case err := <-done:
		cancel()
		t.Fatalf("standalone did not start: %v\n%s", err, s.out)
	case <-time.After(60 * time.Second):
		cancel()
		t.Fatalf("standalone not ready after 60s\n%s", s.out)
	}
	stopped := false
	s.stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("standalone ended with %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Errorf("standalone did not stop within 30s")
		}
	}
	t.Cleanup(s.stop)
	return s
}

var client = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}

// api returns a client of the admin s serves, with token (none when empty).
func (s *started) api(token string) *cli.Client {
	return &cli.Client{Base: s.url, Token: token, HTTP: client}
}

// login signs in and returns the session token (fails the test otherwise).
func (s *started) login(t *testing.T, password string) string {
	t.Helper()
	c := s.api("")
	if err := c.Login(context.Background(), "admin", password); err != nil || c.Token == "" {
		t.Fatalf("login: %v", err)
	}
	return c.Token
}

// succeededRuns counts the demo job's succeeded runs.
func (s *started) succeededRuns(token string) (int, error) {
	var page struct {
		Runs []apitypes.Run `json:"runs"`
	}
	if _, err := s.api(token).Call(context.Background(), http.MethodGet, "/api/v1/runs?status=succeeded", nil, &page); err != nil {
		return 0, err
	}
	n := 0
	for _, r := range page.Runs {
		if r.Status == "succeeded" && r.JobName == "hello-every-5s" {
			n++
		}
	}
	return n, nil
}

var passwordRE = regexp.MustCompile(`with password (\S+)`)

// TestFirstStartIsQuietAndKeepsThePassword follows an operator through
// three starts of `make run`: the first prints the generated password in a
// frame and keeps it in data/admin.password (0600) while the demo executor
// runs slots without a log line below warn; a second start before any login
// says where the password is; a login removes the file, and a third start
// says how to start afresh instead.
func TestFirstStartIsQuietAndKeepsThePassword(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	file := filepath.Join(dir, PasswordFile)

	first := start(t, dir)
	m := passwordRE.FindStringSubmatch(first.out.String())
	if m == nil {
		t.Fatalf("first start printed no password:\n%s", first.out)
	}
	password := m[1]
	framed := regexp.MustCompile(`(?m)^\+-+\+\n\|  shardjob: first start: created console user "admin" +\|\n\|  with password \S+ +\|\n`)
	if !framed.MatchString(first.out.String()) {
		t.Errorf("the password is not in a frame:\n%s", first.out)
	}
	if !strings.Contains(first.out.String(), file) {
		t.Errorf("the first start does not say where the password is kept (%s):\n%s", file, first.out)
	}
	info, err := os.Stat(file)
	if err != nil {
		t.Fatalf("password file: %v", err)
	}
	if perm := info.Mode().Perm(); perm != 0o600 {
		t.Errorf("password file mode %v, want 0600", perm)
	}
	// The database and SQLite's files beside it hold password and key
	// hashes and every job's params: the owner's only.
	for _, name := range []string{DatabaseFile, DatabaseFile + "-wal", DatabaseFile + "-shm"} {
		info, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if perm := info.Mode().Perm(); perm != 0o600 {
			t.Errorf("%s mode %v, want 0600", name, perm)
		}
	}
	if b, _ := os.ReadFile(file); strings.TrimSpace(string(b)) != password {
		t.Errorf("password file holds %q, the frame %q", b, password)
	}
	first.stop()

	second := start(t, dir)
	if passwordRE.MatchString(second.out.String()) {
		t.Errorf("a second start printed a password again:\n%s", second.out)
	}
	if want := "is in " + file; !strings.Contains(second.out.String(), want) {
		t.Errorf("a second start before any login does not say %q:\n%s", want, second.out)
	}
	token := second.login(t, password)
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Errorf("the password file is still there after the first login (%v)", err)
	}
	// The demo executor works without saying so: wait for two succeeded
	// runs of the demo job (8 slots each), then look for its log records.
	testenv.WaitFor(t, 60*time.Second, func() (bool, error) {
		n, err := second.succeededRuns(token)
		return n >= 2, err
	}, "two demo runs succeeded")
	var demoBelowWarn, adminInfo int
	for _, line := range strings.Split(strings.TrimSpace(second.logs.String()), "\n") {
		var rec struct {
			Level     string `json:"level"`
			Component string `json:"component"`
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		switch {
		case rec.Component == "demo-executor" && (rec.Level == "INFO" || rec.Level == "DEBUG"):
			demoBelowWarn++
		case rec.Level == "INFO":
			adminInfo++
		}
	}
	if demoBelowWarn > 0 {
		t.Errorf("the demo executor logged %d record(s) below warn:\n%s", demoBelowWarn, second.logs)
	}
	if adminInfo == 0 {
		t.Errorf("no info record from the admin: the check above would pass for a logger that writes nothing")
	}
	second.stop()

	third := start(t, dir)
	if want := fmt.Sprintf("delete %s to start afresh", dir); !strings.Contains(third.out.String(), want) {
		t.Errorf("a start after the first login does not say %q:\n%s", want, third.out)
	}
	if strings.Contains(third.out.String(), PasswordFile) {
		t.Errorf("a start after the first login still points to the password file:\n%s", third.out)
	}
}
