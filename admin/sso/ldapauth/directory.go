package ldapauth

import (
	"cmp"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/go-ldap/ldap/v3"

	"github.com/shardjob/shardjob/admin/sso"
)

// groupPageSize is the page size of group searches (Active Directory
// answers at most 1000 entries per page).
const groupPageSize = 500

// refusedCodes are the answers to the user's bind that mean "not with this
// password" rather than "the directory cannot be asked".
var refusedCodes = []uint16{
	ldap.LDAPResultInvalidCredentials,
	ldap.LDAPResultInappropriateAuthentication,
	ldap.LDAPResultInsufficientAccessRights,
	ldap.LDAPResultConstraintViolation, // password policy: locked
	ldap.LDAPResultUnwillingToPerform,  // 389 Directory Server: inactivated account
}

// Directory is an LDAP server or Active Directory as sso.LDAPConfig
// describes it. See the package documentation.
type Directory struct {
	cfg      sso.LDAPConfig
	log      *slog.Logger
	tls      bool   // ldaps://
	hostport string // host:port to dial
	tlsConf  *tls.Config
}

// New checks cfg, fills the defaults of sso.LDAPConfig that are not set (as
// sso.Load does) and reads cfg.CAFile. It does not connect. log may be nil.
func New(cfg sso.LDAPConfig, log *slog.Logger) (*Directory, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	cfg.UserFilter = cmp.Or(cfg.UserFilter, sso.DefaultLDAPFilter)
	cfg.UsernameAttribute = cmp.Or(cfg.UsernameAttribute, sso.DefaultLDAPUserAttr)
	cfg.GroupFilter = cmp.Or(cfg.GroupFilter, sso.DefaultLDAPGroupFind)
	cfg.MemberOfAttribute = cmp.Or(cfg.MemberOfAttribute, sso.DefaultLDAPMemberOf)
	cfg.Timeout = cmp.Or(cfg.Timeout, sso.DefaultLDAPTimeout)

	u, err := url.Parse(cfg.URL)
	if err != nil || (u.Scheme != "ldap" && u.Scheme != "ldaps") || u.Hostname() == "" {
		return nil, fmt.Errorf("ldap.url %q: write ldap://host:389 or ldaps://host:636", cfg.URL)
	}
	switch {
	case cfg.StartTLS && u.Scheme == "ldaps":
		return nil, errors.New("ldap.start_tls with an ldaps:// url: choose one (ldaps is TLS from the start)")
	case cfg.UserBase == "":
		return nil, errors.New("ldap.user_base is empty: the DN under which users are searched")
	case !strings.Contains(cfg.UserFilter, "{username}"):
		return nil, fmt.Errorf("ldap.user_filter %q does not contain {username}", cfg.UserFilter)
	case cfg.Timeout < 0:
		return nil, fmt.Errorf("ldap.timeout %s is negative", cfg.Timeout)
	}
	if _, err := ldap.ParseDN(cfg.UserBase); err != nil {
		return nil, fmt.Errorf("ldap.user_base %q is not a DN: %w", cfg.UserBase, err)
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"ldap": "389", "ldaps": "636"}[u.Scheme]
	}
	roots, err := x509.SystemCertPool()
	if err != nil {
		roots = x509.NewCertPool()
	}
	if cfg.CAFile != "" {
		pem, err := os.ReadFile(cfg.CAFile)
		if err != nil {
			return nil, fmt.Errorf("ldap.ca_file: %w", err)
		}
		if !roots.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("ldap.ca_file %s holds no PEM certificate", cfg.CAFile)
		}
	}
	d := &Directory{
		cfg:      cfg,
		log:      log,
		tls:      u.Scheme == "ldaps",
		hostport: net.JoinHostPort(u.Hostname(), port),
		tlsConf:  &tls.Config{ServerName: u.Hostname(), RootCAs: roots, MinVersion: tls.VersionTLS12},
	}
	if !d.tls && !cfg.StartTLS {
		log.Warn("ldap: passwords are sent to the directory unencrypted; use an ldaps:// url or start_tls", "url", cfg.URL)
	}
	return d, nil
}

// SignIn checks username and password against the directory and returns
// what it says of the person. See the package documentation.
func (d *Directory) SignIn(ctx context.Context, username, password string) (sso.Identity, error) {
	start := time.Now()
	id, err := d.signIn(ctx, username, password)
	if err != nil {
		d.log.DebugContext(ctx, "ldap sign-in refused", "username", username, "err", err, "took", time.Since(start))
		return sso.Identity{}, err
	}
	d.log.DebugContext(ctx, "ldap sign-in", "username", id.Username, "dn", id.Subject, "groups", len(id.Groups), "took", time.Since(start))
	return id, nil
}

func (d *Directory) signIn(ctx context.Context, username, password string) (sso.Identity, error) {
	switch {
	case username == "":
		return sso.Identity{}, fmt.Errorf("%w: empty user name", sso.ErrBadCredentials)
	case password == "":
		// Never sent: a bind with a DN and no password is an
		// unauthenticated bind, which many servers let succeed.
		return sso.Identity{}, fmt.Errorf("%w: empty password for %q", sso.ErrBadCredentials, username)
	}
	s, err := d.connect(ctx)
	if err != nil {
		return sso.Identity{}, err
	}
	defer s.close()

	filter := strings.ReplaceAll(d.cfg.UserFilter, "{username}", ldap.EscapeFilter(username))
	var res *ldap.SearchResult
	err = s.do("search for the user", func() (err error) {
		res, err = s.c.Search(ldap.NewSearchRequest(d.cfg.UserBase, ldap.ScopeWholeSubtree, ldap.NeverDerefAliases,
			2, 0, false, filter, d.userAttributes(), nil))
		return err
	})
	switch {
	case ldap.IsErrorWithCode(err, ldap.LDAPResultSizeLimitExceeded), err == nil && len(res.Entries) > 1:
		return sso.Identity{}, fmt.Errorf("%w: more than one entry under %s matches %s: refusing an ambiguous user name",
			sso.ErrBadCredentials, d.cfg.UserBase, filter)
	case err != nil:
		return sso.Identity{}, err
	case len(res.Entries) == 0:
		return sso.Identity{}, fmt.Errorf("%w: no entry under %s matches %s", sso.ErrBadCredentials, d.cfg.UserBase, filter)
	}
	entry := res.Entries[0]
	id, err := d.identity(s, entry, sso.ErrBadCredentials)
	if err != nil {
		return sso.Identity{}, err
	}

	err = s.do("bind as the user", func() error { return s.c.Bind(entry.DN, password) })
	var le *ldap.Error
	if errors.As(err, &le) && slices.Contains(refusedCodes, le.ResultCode) {
		return sso.Identity{}, fmt.Errorf("%w: the directory refused the password of %s: %w", sso.ErrBadCredentials, entry.DN, le)
	}
	if err != nil {
		return sso.Identity{}, err
	}
	return id, nil
}

// Lookup asks the directory again about the person SignIn returned as
// subject (their DN), with the service account. See the package
// documentation.
func (d *Directory) Lookup(ctx context.Context, subject string) (sso.Identity, error) {
	dn, err := ldap.ParseDN(subject)
	if err != nil {
		return sso.Identity{}, fmt.Errorf("%w: subject %q is not a DN: %w", sso.ErrGone, subject, err)
	}
	base, _ := ldap.ParseDN(d.cfg.UserBase) // checked by New
	if !base.AncestorOfFold(dn) {
		return sso.Identity{}, fmt.Errorf("%w: %s is not under user_base %s", sso.ErrGone, subject, d.cfg.UserBase)
	}
	s, err := d.connect(ctx)
	if err != nil {
		return sso.Identity{}, err
	}
	defer s.close()

	filter := strings.ReplaceAll(d.cfg.UserFilter, "{username}", "*")
	var res *ldap.SearchResult
	err = s.do("read the user's entry", func() (err error) {
		res, err = s.c.Search(ldap.NewSearchRequest(subject, ldap.ScopeBaseObject, ldap.NeverDerefAliases,
			1, 0, false, filter, d.userAttributes(), nil))
		return err
	})
	if ldap.IsErrorWithCode(err, ldap.LDAPResultNoSuchObject) || err == nil && len(res.Entries) == 0 {
		return sso.Identity{}, fmt.Errorf("%w: %s does not exist or no longer matches %s", sso.ErrGone, subject, filter)
	}
	if err != nil {
		return sso.Identity{}, err
	}
	id, err := d.identity(s, res.Entries[0], sso.ErrGone)
	if err != nil {
		return sso.Identity{}, err
	}
	d.log.DebugContext(ctx, "ldap lookup", "dn", id.Subject, "groups", len(id.Groups))
	return id, nil
}

// userAttributes are the attributes read from a user's entry.
func (d *Directory) userAttributes() []string {
	attrs := []string{d.cfg.UsernameAttribute}
	if d.cfg.EmailAttribute != "" {
		attrs = append(attrs, d.cfg.EmailAttribute)
	}
	if d.cfg.GroupBase == "" {
		attrs = append(attrs, d.cfg.MemberOfAttribute)
	}
	return attrs
}

// identity makes the Identity of a user's entry, reading its groups. An
// entry without a user name is an error wrapping unusable.
func (d *Directory) identity(s *session, entry *ldap.Entry, unusable error) (sso.Identity, error) {
	id := sso.Identity{
		Source:   sso.SourceLDAP,
		Subject:  entry.DN,
		Username: entry.GetEqualFoldAttributeValue(d.cfg.UsernameAttribute),
	}
	if id.Username == "" {
		return sso.Identity{}, fmt.Errorf("%w: %s has no %s attribute to name the user by (ldap.username_attribute)",
			unusable, entry.DN, d.cfg.UsernameAttribute)
	}
	if d.cfg.EmailAttribute != "" {
		id.Email = entry.GetEqualFoldAttributeValue(d.cfg.EmailAttribute)
	}
	if d.cfg.GroupBase == "" {
		id.Groups = entry.GetEqualFoldAttributeValues(d.cfg.MemberOfAttribute)
	} else {
		filter := strings.NewReplacer("{dn}", ldap.EscapeFilter(entry.DN), "{username}", ldap.EscapeFilter(id.Username)).
			Replace(d.cfg.GroupFilter)
		var res *ldap.SearchResult
		err := s.do("search for the user's groups", func() (err error) {
			res, err = s.c.SearchWithPaging(ldap.NewSearchRequest(d.cfg.GroupBase, ldap.ScopeWholeSubtree, ldap.NeverDerefAliases,
				0, 0, false, filter, []string{"1.1"}, nil), groupPageSize)
			return err
		})
		if err != nil {
			return sso.Identity{}, err
		}
		for _, g := range res.Entries {
			id.Groups = append(id.Groups, g.DN)
		}
	}
	slices.Sort(id.Groups)
	return id, nil
}
