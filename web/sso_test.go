package web_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/deploy/dev/testenv"
)

// TestSSOInBrowser signs people in to a real standalone admin through a
// real OIDC provider process (testenv's, on zitadel/oidc) and a real slapd,
// in headless Chromium: the provider's button on the sign-in page, its
// login form, back to the console page the sign-in began from with the
// mapped role; an RP-initiated logout through the provider; an LDAP
// account through the password form; a person removed from their mapped
// group at the provider or in the directory refused at their next request
// with the reason; and a replayed callback back on the sign-in page with
// why.
func TestSSOInBrowser(t *testing.T) {
	chromium := testenv.Chromium(t)
	port := testenv.FreePort(t)
	base := "http://127.0.0.1:" + strconv.Itoa(port)
	provider := testenv.StartOIDCProvider(t, testenv.OIDCProviderConfig{
		RedirectURIs:           []string{base + "/api/v1/sso/oidc/callback"},
		PostLogoutRedirectURIs: []string{base + "/"},
	})
	ann := testenv.LDAPUser{UID: "ann", Password: "ann-directory-pw", Mail: "ann@example.org", Groups: []string{"viewers"}}
	zed := testenv.LDAPUser{UID: "zed", Password: "zed-directory-pw", Groups: []string{"viewers"}} // a group keeps a member
	dir := testenv.StartLDAP(t, ann, zed)

	cfgDir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(cfgDir, name)
		require.NoError(t, os.WriteFile(p, []byte(text), 0o600))
		return p
	}
	clientSecret := write("oidc-secret", provider.ClientSecret+"\n")
	bindPassword := write("ldap-password", dir.ServicePassword+"\n")
	ssoConfig := write("sso.yaml", fmt.Sprintf(`
oidc:
  name: TestIdP
  issuer: %s
  client_id: %s
  client_secret_file: %s
  redirect_url: %s/api/v1/sso/oidc/callback
ldap:
  url: %s
  start_tls: true
  ca_file: %s
  bind_dn: %s
  bind_password_file: %s
  user_base: %s
  email_attribute: mail
mapping:
  - {group: ops, source: oidc, role: operator, apps: [demo]}
  - {group: %q, source: ldap, role: viewer}
recheck: 0s
`, provider.Issuer, provider.ClientID, clientSecret, base, dir.URL, dir.CAFile, dir.ServiceDN, bindPassword, dir.UserBase, dir.GroupDN("viewers")))
	// The last --http-addr counts: the callback registered above.
	sa := startStandalone(t, "--http-addr", "127.0.0.1:"+strconv.Itoa(port), "--sso-config", ssoConfig)

	b := newBrowser(t, chromium, artifactsDir(t))
	defer b.checkConsole()
	me := func() string {
		return b.evalString(`fetch("/api/v1/me").then(r => r.json()).then(m => m.error || [m.username, m.role, m.source, (m.apps || []).join(",")].join(" "))`)
	}

	// OIDC: the button, the provider's form, back to the page asked for.
	b.do(chromedp.Navigate(base+"/#/jobs"), chromedp.WaitVisible(chromedp.CSS("#sso-oidc")))
	require.Equal(t, "Sign in with TestIdP", strings.TrimSpace(b.text("#sso-oidc")))
	require.Contains(t, b.text("#sso-ldap-hint"), "LDAP")
	b.screenshot("sso-00-login")
	b.signInAtProvider("alice", "alice-pw")
	require.Equal(t, "#/jobs", b.evalString(`location.hash`), "back on the page the sign-in began from")
	require.Contains(t, b.text("#who"), "alice")
	require.Equal(t, "alice operator oidc demo", me())
	require.False(t, b.evalBool(`!!document.querySelector('#nav a[data-nav="users"]')`), "an operator has no Users page")
	require.True(t, b.evalBool(`document.getElementById("change-password").hidden`), "a directory user has no password here")

	// RP-initiated logout: through the provider's end_session, back to the sign-in page.
	b.do(chromedp.Click(chromedp.CSS("#logout")), chromedp.WaitVisible(chromedp.CSS("#login-form")))
	st, err := provider.State()
	require.NoError(t, err)
	require.Equal(t, 1, st.Logouts, "the provider ended its session")

	// LDAP through the password form.
	b.login("ann", "ann-directory-pw")
	require.Equal(t, "ann viewer ldap ", me())
	require.NoError(t, dir.RemoveFromGroup(ann, "viewers"))
	b.do(chromedp.Navigate(base+"/#/runs"), chromedp.WaitVisible(chromedp.CSS("#login-form")))
	b.waitJS(10*time.Second, `document.getElementById("login-error").textContent.includes("access of ann ended: none of your groups is mapped to a role")`,
		"ann told why her access ended")
	require.NoError(t, dir.AddToGroup(ann, "viewers"))
	b.login("ann", "ann-directory-pw")
	require.Equal(t, "ann viewer ldap ", me(), "mapped again at the next sign-in")

	// OIDC: removed from the mapped group at the provider.
	b.do(chromedp.Click(chromedp.CSS("#logout")), chromedp.WaitVisible(chromedp.CSS("#sso-oidc")))
	b.signInAtProvider("alice", "alice-pw")
	require.NoError(t, provider.SetGroups("alice", "platform"))
	b.do(chromedp.Navigate(base+"/#/dashboard"), chromedp.WaitVisible(chromedp.CSS("#login-form")))
	b.waitJS(10*time.Second, `document.getElementById("login-error").textContent.includes("access of alice ended")`, "alice told why her access ended")

	// A callback replayed or forged: back on the sign-in page with why.
	b.do(chromedp.Navigate(base+"/api/v1/sso/oidc/callback?state=forged&code=x"), chromedp.WaitVisible(chromedp.CSS("#login-form")))
	b.waitJS(10*time.Second, `document.getElementById("login-error").textContent.includes("this sign-in was used already")`, "the refusal shown")
	require.Equal(t, "", b.evalString(`location.search`), "the reason is taken out of the address")
	b.screenshot("sso-01-refused")

	// The local admin sees where each user signs in, and whose access ended;
	// a directory user's role is not edited here.
	b.login("admin", sa.password)
	b.menu("users")
	b.waitJS(10*time.Second, `[...document.querySelectorAll("#users-table tbody tr")].length === 3`, "three users listed")
	row := func(name string) string {
		return b.evalString(fmt.Sprintf(`[...document.querySelectorAll("#users-table tbody tr")].find(tr => tr.querySelector(".user-name").textContent === %q).textContent`, name))
	}
	require.Contains(t, row("alice"), "OIDC")
	require.Contains(t, row("alice"), "access ended")
	require.Contains(t, row("ann"), "LDAP")
	require.NotContains(t, row("ann"), "access ended")
	require.True(t, b.evalBool(`document.querySelector('button[data-act="edit"][data-user="ann"]').disabled`))
	require.False(t, b.evalBool(`document.querySelector('button[data-act="edit"][data-user="admin"]').disabled`))
	b.screenshot("sso-02-users")
}

// signInAtProvider clicks "Sign in with" on the sign-in page, fills the
// test provider's login form and waits for the console.
func (b *browser) signInAtProvider(user, password string) {
	b.t.Helper()
	b.do(
		chromedp.WaitVisible(chromedp.CSS("#sso-oidc")),
		chromedp.Click(chromedp.CSS("#sso-oidc")),
		chromedp.WaitVisible(chromedp.CSS("#username")),
		chromedp.SendKeys(chromedp.CSS("#username"), user),
		chromedp.SendKeys(chromedp.CSS("#password"), password),
		chromedp.Click(chromedp.CSS("#submit")),
		chromedp.WaitVisible(chromedp.CSS("#nav a.active")),
	)
}
