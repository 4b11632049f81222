package server

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"

	"github.com/shardjob/shardjob/admin/ops"
	"github.com/shardjob/shardjob/admin/sso"
	"github.com/shardjob/shardjob/admin/sso/ldapauth"
	"github.com/shardjob/shardjob/admin/sso/oidcauth"
	"github.com/shardjob/shardjob/admin/store"
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

// ssoSettings is what the audit log keeps of the single sign-on settings:
// everything but the secrets.
type ssoSettings struct {
	Enabled      bool        `json:"enabled"`
	OIDC         *ssoOIDC    `json:"oidc,omitempty"`
	LDAP         *ssoLDAP    `json:"ldap,omitempty"`
	Mapping      sso.Mapping `json:"mapping,omitempty"`
	Recheck      string      `json:"recheck,omitempty"`
	RecheckGrace string      `json:"recheck_grace,omitempty"`
	Local        bool        `json:"password_sign_in"`
	BreakGlass   string      `json:"break_glass_user,omitempty"`
}

type ssoOIDC struct {
	Name          string   `json:"name"`
	Issuer        string   `json:"issuer"`
	ClientID      string   `json:"client_id"`
	GroupsClaim   string   `json:"groups_claim"`
	UsernameClaim string   `json:"username_claim"`
	Scopes        []string `json:"scopes"`
}

type ssoLDAP struct {
	URL         string `json:"url"`
	StartTLS    bool   `json:"start_tls"`
	BindDN      string `json:"bind_dn"`
	UserBase    string `json:"user_base"`
	UserFilter  string `json:"user_filter"`
	GroupBase   string `json:"group_base,omitempty"`
	GroupFilter string `json:"group_filter,omitempty"`
	MemberOf    string `json:"member_of_attribute,omitempty"`
}

// auditSSOSettings records the sign-in settings in the audit log
// (action sso.config, admins only) when they differ from the ones last
// recorded: a changed mapping is a change of who may do what, and says so
// with the replica that started with it.
func auditSSOSettings(ctx context.Context, st *store.Store, cfg AuthConfig, d *ops.Directories, replica string) error {
	set := ssoSettings{Local: !cfg.NoPasswordSignIn, BreakGlass: cfg.BreakGlassUser}
	if d != nil {
		c := d.Config
		set.Enabled, set.Mapping = true, c.Mapping
		set.Recheck, set.RecheckGrace = c.RecheckEvery().String(), c.Grace().String()
		if o := c.OIDC; o != nil {
			set.OIDC = &ssoOIDC{Name: o.Name, Issuer: o.Issuer, ClientID: o.ClientID, GroupsClaim: o.GroupsClaim, UsernameClaim: o.UsernameClaim, Scopes: o.Scopes}
		}
		if l := c.LDAP; l != nil {
			set.LDAP = &ssoLDAP{URL: l.URL, BindDN: l.BindDN, UserBase: l.UserBase, UserFilter: l.UserFilter, GroupBase: l.GroupBase,
				GroupFilter: l.GroupFilter, MemberOf: l.MemberOfAttribute, StartTLS: l.StartTLS}
		}
	}
	b, err := json.Marshal(set)
	if err != nil {
		return err
	}
	last, err := st.AuditLog(ctx, 0, 1, store.AuditScope{All: true}, store.AuditFilter{Action: ssoConfigAction})
	if err != nil {
		return err
	}
	if len(last) > 0 && last[0].Detail == string(b) || len(last) == 0 && !set.Enabled && set.Local {
		return nil // unchanged, or never configured
	}
	return st.Audit(ctx, store.AuditEntry{Actor: "admin " + replica, Action: ssoConfigAction, Object: "platform/sign-in", Detail: string(b)})
}

// ssoConfigAction is the audit action of a change of the sign-in settings.
const ssoConfigAction = "sso.config"
