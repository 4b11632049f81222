package server

import (
	"log/slog"
	"os"

	"github.com/shardjob/shardjob/admin/ops"
	"github.com/shardjob/shardjob/admin/sso"
	"github.com/shardjob/shardjob/admin/sso/ldapauth"
	"github.com/shardjob/shardjob/admin/sso/oidcauth"
)

// AuthConfig is how people sign in to the console and the API
// (docs/security.md, Single sign-on).
type AuthConfig struct {
	// SSOConfigFile is the --sso-config file (YAML, admin/sso.Config):
	// OIDC and/or LDAP, and the mapping of groups to roles and apps.
	// Default none: local users only.
	SSOConfigFile string
	// NoPasswordSignIn turns the password sign-in of local users off
	// (--auth-local=false) except for BreakGlassUser. It needs
	// SSOConfigFile: without it nobody but that user could sign in.
	NoPasswordSignIn bool
	// BreakGlassUser is the local user who may still sign in with a
	// password when NoPasswordSignIn is set (--auth-break-glass-user;
	// default none).
	BreakGlassUser string
}

// directories builds single sign-on from cfg: nil without a config
// file. The OIDC refresh tokens kept to recheck users are sealed with a
// key derived from the executor secret.
func (cfg AuthConfig) directories(executorSecret string, log *slog.Logger) (*ops.Directories, error) {
	if cfg.SSOConfigFile == "" {
		if cfg.NoPasswordSignIn {
			return nil, settingErr("auth-local", "false without --sso-config: nobody but the break-glass user could sign in; configure OIDC or LDAP first")
		}
		return nil, nil
	}
	c, err := sso.Load(cfg.SSOConfigFile, os.Getenv)
	if err != nil {
		return nil, &SettingError{Setting: "sso-config", Err: err}
	}
	d := &ops.Directories{Config: c}
	if c.LDAP != nil {
		dir, err := ldapauth.New(*c.LDAP, log)
		if err != nil {
			return nil, &SettingError{Setting: "sso-config", Err: err}
		}
		d.LDAP = dir
	}
	if c.OIDC != nil {
		d.OIDC = oidcauth.New(*c.OIDC, log)
		if d.Sealer, err = sso.NewSealer([]byte(executorSecret)); err != nil {
			return nil, &SettingError{Setting: "executor-secret", Err: err}
		}
	}
	return d, nil
}
