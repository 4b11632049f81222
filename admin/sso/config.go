package sso

import (
	"bytes"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
)

// Defaults of Config.
const (
	DefaultRecheck       = time.Minute
	DefaultRecheckGrace  = 5 * time.Minute
	DefaultOIDCName      = "SSO"
	DefaultGroupsClaim   = "groups"
	DefaultUsernameClaim = "preferred_username"
	DefaultClockSkew     = time.Minute
	MaxClockSkew         = 5 * time.Minute
	DefaultLDAPTimeout   = 5 * time.Second
	DefaultLDAPUserAttr  = "uid"
	DefaultLDAPFilter    = "(uid={username})"
	DefaultLDAPMemberOf  = "memberOf"
	DefaultLDAPGroupFind = "(member={dn})"
)

// Environment variables that may hold the secrets instead of a file.
const (
	EnvOIDCClientSecret = "SHARDJOB_OIDC_CLIENT_SECRET"
	EnvLDAPBindPassword = "SHARDJOB_LDAP_BIND_PASSWORD"
)

// Config is the --sso-config file (YAML). At least one of OIDC and LDAP is
// set, and Mapping has at least one rule. Secrets are never written in the
// file itself: they come from a file it names or an environment variable.
type Config struct {
	OIDC    *OIDCConfig `yaml:"oidc"`
	LDAP    *LDAPConfig `yaml:"ldap"`
	Mapping Mapping     `yaml:"mapping"`
	// Recheck is how long the admin trusts what the directory said of a
	// signed-in user before it asks again, at their next request (default
	// 1m; 0s: at every request).
	Recheck *time.Duration `yaml:"recheck"`
	// RecheckGrace is how long a user may go on working while the
	// directory cannot be asked, counted from the last answer (default
	// 5m; then their requests are refused with 503 until it answers).
	RecheckGrace *time.Duration `yaml:"recheck_grace"`
}

// OIDCConfig is the OpenID Connect provider: authorization-code flow with
// PKCE, discovery and JWKS from Issuer.
type OIDCConfig struct {
	// Name is shown on the console's sign-in button ("Sign in with Name";
	// default "SSO").
	Name string `yaml:"name"`
	// Issuer is the provider's issuer URL; its discovery document is
	// Issuer + "/.well-known/openid-configuration". https, or http on a
	// loopback address (tests).
	Issuer   string `yaml:"issuer"`
	ClientID string `yaml:"client_id"`
	// ClientSecretFile holds the client secret (one line); or set
	// SHARDJOB_OIDC_CLIENT_SECRET. Neither: a public client (PKCE only).
	ClientSecretFile string `yaml:"client_secret_file"`
	// RedirectURL is the console's callback as the provider knows it:
	// <console URL>/api/v1/sso/oidc/callback.
	RedirectURL string `yaml:"redirect_url"`
	// Scopes asked for besides openid (default profile, email).
	Scopes []string `yaml:"scopes"`
	// GroupsClaim is the ID token claim holding the groups (default
	// "groups"; a string or a list of strings).
	GroupsClaim string `yaml:"groups_claim"`
	// UsernameClaim is the claim holding the user name (default
	// "preferred_username"; "email" works too).
	UsernameClaim string `yaml:"username_claim"`
	// ClockSkew is how far the provider's clock may be from ours when
	// expiry and issue times are checked (default 1m, at most 5m).
	ClockSkew time.Duration `yaml:"clock_skew"`
	// CAFile is a PEM file of CAs to trust for the provider besides the
	// system's.
	CAFile string `yaml:"ca_file"`
	// PostLogoutRedirectURL is where the provider sends the browser after
	// an RP-initiated logout (default: the console's sign-in page, derived
	// from RedirectURL).
	PostLogoutRedirectURL string `yaml:"post_logout_redirect_url"`

	// ClientSecret is read from ClientSecretFile or the environment.
	ClientSecret string `yaml:"-"`
}

// LDAPConfig is the LDAP or Active Directory server: the admin binds as a
// service account, finds the user, binds as the user to check the
// password, then reads the user's groups.
type LDAPConfig struct {
	// URL is ldap://host:389 or ldaps://host:636.
	URL string `yaml:"url"`
	// StartTLS upgrades an ldap:// connection before anything is sent.
	StartTLS bool `yaml:"start_tls"`
	// CAFile is a PEM file of CAs to trust for LDAPS and StartTLS besides
	// the system's.
	CAFile string `yaml:"ca_file"`
	// BindDN is the service account that searches (empty: anonymous).
	BindDN string `yaml:"bind_dn"`
	// BindPasswordFile holds its password; or set
	// SHARDJOB_LDAP_BIND_PASSWORD.
	BindPasswordFile string `yaml:"bind_password_file"`
	// UserBase is where users are searched (subtree).
	UserBase string `yaml:"user_base"`
	// UserFilter finds one user; {username} is replaced by the escaped
	// name typed at sign-in (default "(uid={username})"; Active Directory:
	// "(sAMAccountName={username})").
	UserFilter string `yaml:"user_filter"`
	// UsernameAttribute is the attribute the platform's user is named by
	// (default uid; Active Directory: sAMAccountName).
	UsernameAttribute string `yaml:"username_attribute"`
	// EmailAttribute, when set, is read into the user's e-mail (mail).
	EmailAttribute string `yaml:"email_attribute"`
	// GroupBase, when set, makes groups a search there with GroupFilter;
	// otherwise they are the user's MemberOfAttribute values.
	GroupBase string `yaml:"group_base"`
	// GroupFilter finds the user's groups under GroupBase; {dn} is the
	// user's escaped DN and {username} their name (default "(member={dn})").
	GroupFilter string `yaml:"group_filter"`
	// MemberOfAttribute lists the user's group DNs (default memberOf).
	MemberOfAttribute string `yaml:"member_of_attribute"`
	// Timeout bounds each connection and operation (default 5s).
	Timeout time.Duration `yaml:"timeout"`

	// BindPassword is read from BindPasswordFile or the environment.
	BindPassword string `yaml:"-"`
}

// RecheckEvery is Recheck with its default.
func (c Config) RecheckEvery() time.Duration {
	if c.Recheck == nil {
		return DefaultRecheck
	}
	return *c.Recheck
}

// Grace is RecheckGrace with its default.
func (c Config) Grace() time.Duration {
	if c.RecheckGrace == nil {
		return DefaultRecheckGrace
	}
	return *c.RecheckGrace
}

// Load reads, checks and completes the configuration file at path; getenv
// looks up the secrets' environment variables (os.Getenv).
func Load(path string, getenv func(string) string) (Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Config{}, fmt.Errorf("sso config: %w", err)
	}
	c, err := Parse(data)
	if err != nil {
		return Config{}, fmt.Errorf("sso config %s: %w", path, err)
	}
	if err := c.readSecrets(getenv); err != nil {
		return Config{}, fmt.Errorf("sso config %s: %w", path, err)
	}
	return c, nil
}

// Parse reads a configuration, fills the defaults and checks it; secrets
// are left to Load.
func Parse(data []byte) (Config, error) {
	var c Config
	if len(bytes.TrimSpace(data)) == 0 {
		return c, errors.New("the file is empty: configure oidc or ldap, and a mapping")
	}
	if err := yaml.UnmarshalWithOptions(data, &c, yaml.Strict()); err != nil {
		return c, fmt.Errorf("%s", yaml.FormatError(err, false, true))
	}
	c.withDefaults()
	return c, c.validate()
}

func (c *Config) withDefaults() {
	if o := c.OIDC; o != nil {
		if o.Name == "" {
			o.Name = DefaultOIDCName
		}
		if o.Scopes == nil {
			o.Scopes = []string{"profile", "email"}
		}
		if o.GroupsClaim == "" {
			o.GroupsClaim = DefaultGroupsClaim
		}
		if o.UsernameClaim == "" {
			o.UsernameClaim = DefaultUsernameClaim
		}
		if o.ClockSkew == 0 {
			o.ClockSkew = DefaultClockSkew
		}
	}
	if l := c.LDAP; l != nil {
		if l.UserFilter == "" {
			l.UserFilter = DefaultLDAPFilter
		}
		if l.UsernameAttribute == "" {
			l.UsernameAttribute = DefaultLDAPUserAttr
		}
		if l.GroupFilter == "" {
			l.GroupFilter = DefaultLDAPGroupFind
		}
		if l.MemberOfAttribute == "" {
			l.MemberOfAttribute = DefaultLDAPMemberOf
		}
		if l.Timeout == 0 {
			l.Timeout = DefaultLDAPTimeout
		}
	}
}

func (c Config) validate() error {
	if c.OIDC == nil && c.LDAP == nil {
		return errors.New("neither oidc nor ldap is configured: add an oidc or an ldap section")
	}
	if len(c.Mapping) == 0 {
		return errors.New("mapping is empty: add rules (group, role, apps) or nobody could sign in")
	}
	if err := c.Mapping.Check(); err != nil {
		return err
	}
	if c.Recheck != nil && (*c.Recheck < 0 || *c.Recheck > time.Hour) {
		return fmt.Errorf("recheck %s: use 0s (every request) to 1h (default 1m)", *c.Recheck)
	}
	if c.RecheckGrace != nil && (*c.RecheckGrace < 0 || *c.RecheckGrace > 24*time.Hour) {
		return fmt.Errorf("recheck_grace %s: use 0s to 24h (default 5m)", *c.RecheckGrace)
	}
	if o := c.OIDC; o != nil {
		if err := checkURL("oidc.issuer", o.Issuer); err != nil {
			return err
		}
		if err := checkURL("oidc.redirect_url", o.RedirectURL); err != nil {
			return err
		}
		if o.PostLogoutRedirectURL != "" {
			if err := checkURL("oidc.post_logout_redirect_url", o.PostLogoutRedirectURL); err != nil {
				return err
			}
		}
		if o.ClientID == "" {
			return errors.New("oidc.client_id is empty: the client id registered at the provider")
		}
		if o.ClockSkew < 0 || o.ClockSkew > MaxClockSkew {
			return fmt.Errorf("oidc.clock_skew %s: use 0s to %s (default %s)", o.ClockSkew, MaxClockSkew, DefaultClockSkew)
		}
	}
	if l := c.LDAP; l != nil {
		u, err := url.Parse(l.URL)
		if err != nil || (u.Scheme != "ldap" && u.Scheme != "ldaps") || u.Host == "" {
			return fmt.Errorf("ldap.url %q: write ldap://host:389 or ldaps://host:636", l.URL)
		}
		if l.StartTLS && u.Scheme == "ldaps" {
			return errors.New("ldap.start_tls with an ldaps:// url: choose one (ldaps is TLS from the start)")
		}
		if l.UserBase == "" {
			return errors.New("ldap.user_base is empty: the DN under which users are searched, e.g. ou=people,dc=example,dc=org")
		}
		if !strings.Contains(l.UserFilter, "{username}") {
			return fmt.Errorf("ldap.user_filter %q does not contain {username}: it must find the user by the name typed", l.UserFilter)
		}
		if l.GroupBase != "" && !strings.Contains(l.GroupFilter, "{dn}") && !strings.Contains(l.GroupFilter, "{username}") {
			return fmt.Errorf("ldap.group_filter %q contains neither {dn} nor {username}: it must find the user's groups", l.GroupFilter)
		}
		if l.Timeout < 0 || l.Timeout > time.Minute {
			return fmt.Errorf("ldap.timeout %s: use up to 1m (default 5s)", l.Timeout)
		}
	}
	return nil
}

// checkURL accepts https URLs, and http ones on a loopback host (a
// provider in a test, or behind a local proxy).
func checkURL(field, raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return fmt.Errorf("%s %q is not an absolute URL", field, raw)
	}
	host := u.Hostname()
	loopback := host == "localhost" || strings.HasPrefix(host, "127.") || host == "::1"
	if u.Scheme != "https" && !(u.Scheme == "http" && loopback) {
		return fmt.Errorf("%s %q: use https (http only on a loopback address)", field, raw)
	}
	return nil
}

// readSecrets fills the secrets from their files or the environment.
func (c *Config) readSecrets(getenv func(string) string) error {
	if o := c.OIDC; o != nil {
		s, err := secret(o.ClientSecretFile, getenv(EnvOIDCClientSecret), "oidc.client_secret_file")
		if err != nil {
			return err
		}
		o.ClientSecret = s
	}
	if l := c.LDAP; l != nil {
		s, err := secret(l.BindPasswordFile, getenv(EnvLDAPBindPassword), "ldap.bind_password_file")
		if err != nil {
			return err
		}
		if l.BindDN != "" && s == "" {
			return fmt.Errorf("ldap.bind_dn is set but no password: write it in ldap.bind_password_file or %s", EnvLDAPBindPassword)
		}
		l.BindPassword = s
	}
	return nil
}

// secret is the first line of file, or env when file is empty.
func secret(file, env, field string) (string, error) {
	if file == "" {
		return env, nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("%s: %w", field, err)
	}
	s := strings.TrimRight(strings.SplitN(string(b), "\n", 2)[0], "\r")
	if s == "" {
		return "", fmt.Errorf("%s %s is empty", field, file)
	}
	return s, nil
}
