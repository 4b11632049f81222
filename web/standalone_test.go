package web_test

import (
	"fmt"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/deploy/dev/testenv"
)

// standalone is a real standalone admin (SQLite, demo executor) started
// for one test on a free port.
type standalone struct {
	base     string // http://127.0.0.1:port
	dataDir  string
	password string // the generated admin password of the first start
}

// startStandalone builds and starts the admin binary in standalone mode
// with extra flags, waits until it is ready and reads the admin password
// it prints on its first start.
func startStandalone(t *testing.T, extra ...string) standalone {
	t.Helper()
	bin := testenv.BuildBinary(t, adminPkg)
	dataDir := filepath.Join(t.TempDir(), "data")
	addr := "127.0.0.1:" + strconv.Itoa(testenv.FreePort(t))
	proc := testenv.StartProcess(t, bin, append([]string{"standalone", "--data-dir", dataDir, "--http-addr", addr}, extra...), nil)
	_, err := proc.WaitForLine(timeout(t, 60*time.Second), "standalone mode ready")
	require.NoError(t, err)
	m := passwordRE.FindStringSubmatch(proc.Stdout())
	require.NotNil(t, m, "the first start prints the admin password: %s", proc.Output())
	return standalone{base: "http://" + addr, dataDir: dataDir, password: m[1]}
}

// menu opens a page through its menu entry: in the top bar, in the "More"
// menu that takes the entries a narrow bar cannot fit (the console test
// checks that menu itself at 1200 px), or in the user menu (API tokens).
func (b *browser) menu(name string) {
	b.t.Helper()
	sel := fmt.Sprintf(`#nav a[data-nav=%q], #nav-more-list a[data-nav=%q], #user-menu a[data-nav=%q]`, name, name, name)
	b.do(chromedp.WaitReady(chromedp.CSS(sel)),
		chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`document.querySelector(%q).click()`, sel)))
}

// consoleSession starts a standalone admin and returns it with an API
// client and a browser logged in to its console, both as admin.
func consoleSession(t *testing.T) (standalone, *apiClient, *browser) {
	t.Helper()
	chromium := testenv.Chromium(t)
	sa := startStandalone(t)
	api := newAPIClient(t, sa.base, "admin", sa.password)
	b := newBrowser(t, chromium, artifactsDir(t))
	b.do(chromedp.Navigate(sa.base+"/"), chromedp.WaitVisible(chromedp.CSS("#login-form")))
	b.login("admin", sa.password)
	return sa, api, b
}
