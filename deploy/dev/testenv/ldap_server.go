package testenv

import (
	"context"
	"crypto/rand"
	"crypto/sha1" // slapd's {SSHA} password scheme is SHA-1 by definition; test data only
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-ldap/ldap/v3"
)

const (
	ldapStartTimeout = 30 * time.Second
	ldapStopTimeout  = 10 * time.Second
	ldapOpTimeout    = 10 * time.Second // a fixture's own LDAP operation

	// LDAPSuffix is the naming context of the servers StartLDAP starts.
	LDAPSuffix = "dc=example,dc=org"

	ldapSchemaDir = "/etc/ldap/schema" // Debian's slapd package
	ldapModuleDir = "/usr/lib/ldap"
)

// LDAPUser is a person StartLDAP puts into the directory: an inetOrgPerson
// entry uid=UID under ou=people (or under ou=OU,ou=people).
type LDAPUser struct {
	UID string // uid; also its cn and sn
	// Password is stored as a salted SHA-1 hash ({SSHA}); empty: the entry
	// has no userPassword, and nobody can bind as it.
	Password string
	Mail     string // mail; empty: none
	// OU is an organizational unit below ou=people that holds the entry
	// (created when first named); empty: ou=people itself.
	OU string
	// Groups are the cn of groupOfNames entries under ou=groups that list
	// the user as a member (created when first named).
	Groups []string
}

// LDAP is a private OpenLDAP server (Debian's slapd) owned by one test
// (StartLDAP), for the tests of LDAP sign-in. It holds:
//
//	dc=example,dc=org                 the suffix (LDAPSuffix)
//	  cn=svc                          the service account: may search and read
//	                                  every entry (not passwords), may write nothing
//	  ou=people                       UserBase: the LDAPUser entries
//	    [ou=<OU>]                     (LDAPUser.OU)
//	  ou=groups                       GroupBase: groupOfNames, cn=<group>
//
// The memberof overlay keeps each user's memberOf attribute (operational:
// ask for it by name) in step with the groups' member values, also when a
// user is deleted. Users may bind with their password; anonymous clients
// may bind and read nothing. The root DN (RootDN) may do anything.
//
// slapd listens on 127.0.0.1 on two free ports: URL (plain LDAP, StartTLS
// offered) and LDAPSURL (TLS from the start), both with a certificate for
// 127.0.0.1 and localhost signed by a CA made for this server (CAFile).
// Its configuration (slapd.conf), database (mdb) and log live in a
// temporary directory and survive Stop/Kill and Start.
type LDAP struct {
	URL      string // ldap://127.0.0.1:port
	LDAPSURL string // ldaps://127.0.0.1:port

	Suffix    string // LDAPSuffix
	UserBase  string // ou=people,dc=example,dc=org
	GroupBase string // ou=groups,dc=example,dc=org

	// CAFile is the PEM file of the CA that signed the server's
	// certificate (ca_file).
	CAFile string

	ServiceDN       string // cn=svc,dc=example,dc=org
	ServicePassword string
	RootDN          string // cn=admin,dc=example,dc=org: not subject to the access rules
	RootPassword    string

	dir     string
	port    int
	tlsPort int
	srv     *server
}

// StartLDAP starts a private slapd for the calling test with users in it
// (loaded with ldapadd, so that the memberof overlay sees them join their
// groups). It is stopped (SIGTERM, then SIGKILL after 10s) and its directory
// removed when the test ends; with SHARDJOB_TEST_KEEP=1 the directory is
// kept and its path logged. Start-up takes a few tens of milliseconds, so
// every test may have its own server.
//
// slapd and ldapadd come from Debian's slapd and ldap-utils
// packages (deploy/dev/ensure-deps.sh installs them); the machine's own
// slapd service is not used and need not run. As root, slapd runs as root.
func StartLDAP(t testing.TB, users ...LDAPUser) *LDAP {
	t.Helper()
	return startPrivate(t, "LDAP", "sjt-ldap-", func(dir string) (*LDAP, *server, error) {
		l, err := newLDAP(dir, users)
		if l == nil {
			return nil, nil, err
		}
		return l, l.srv, err
	})
}

// Addr returns "127.0.0.1:port" of URL.
func (l *LDAP) Addr() string { return "127.0.0.1:" + strconv.Itoa(l.port) }

// PID returns the pid of the running slapd, or 0 when it is not running.
func (l *LDAP) PID() int { return l.srv.pid() }

// LogPath returns the server log (all runs, appended; -d stats: one line
// per connection and operation).
func (l *LDAP) LogPath() string { return l.srv.logPath }

// Stop shuts slapd down with SIGTERM and waits until it exited; it kills it
// if it did not within 10s (returning an error). Stopping a stopped server
// does nothing.
func (l *LDAP) Stop() error { return l.srv.stop() }

// Kill sends SIGKILL to slapd and waits until it is gone. It fails if the
// server is not running.
func (l *LDAP) Kill() error { return l.srv.kill() }

// Start starts the stopped or killed server again on the same ports and
// database and waits until the root DN can bind.
func (l *LDAP) Start() error { return l.srv.start() }

// Restart stops the server (SIGTERM) and starts it again.
func (l *LDAP) Restart() error {
	if err := l.Stop(); err != nil {
		return err
	}
	return l.Start()
}

// UserDN returns the DN of u's entry.
func (l *LDAP) UserDN(u LDAPUser) string {
	base := l.UserBase
	if u.OU != "" {
		base = "ou=" + ldap.EscapeDN(u.OU) + "," + base
	}
	return "uid=" + ldap.EscapeDN(u.UID) + "," + base
}

// GroupDN returns the DN of the group named cn.
func (l *LDAP) GroupDN(cn string) string {
	return "cn=" + ldap.EscapeDN(cn) + "," + l.GroupBase
}

// AddToGroup adds u as a member of an existing group.
func (l *LDAP) AddToGroup(u LDAPUser, group string) error {
	return l.asRoot("add "+u.UID+" to group "+group, func(c *ldap.Conn) error {
		req := ldap.NewModifyRequest(l.GroupDN(group), nil)
		req.Add("member", []string{l.UserDN(u)})
		return c.Modify(req)
	})
}

// RemoveFromGroup removes u from group. A groupOfNames needs a member:
// removing the last one fails (object class violation); give such a
// group a second member in StartLDAP.
func (l *LDAP) RemoveFromGroup(u LDAPUser, group string) error {
	return l.asRoot("remove "+u.UID+" from group "+group, func(c *ldap.Conn) error {
		req := ldap.NewModifyRequest(l.GroupDN(group), nil)
		req.Delete("member", []string{l.UserDN(u)})
		return c.Modify(req)
	})
}

// DeleteUser deletes u's entry; the memberof overlay removes it from its
// groups.
func (l *LDAP) DeleteUser(u LDAPUser) error {
	return l.asRoot("delete user "+u.UID, func(c *ldap.Conn) error {
		return c.Del(ldap.NewDelRequest(l.UserDN(u), nil))
	})
}

// asRoot runs f on a connection bound as the root DN.
func (l *LDAP) asRoot(what string, f func(c *ldap.Conn) error) error {
	c, err := l.rootConn(ldapOpTimeout)
	if err != nil {
		return fmt.Errorf("testenv: LDAP %s: %w", what, err)
	}
	defer func() { _ = c.Close() }()
	if err := f(c); err != nil {
		return fmt.Errorf("testenv: LDAP %s: %w", what, err)
	}
	return nil
}

// rootConn connects to URL and binds as the root DN.
func (l *LDAP) rootConn(timeout time.Duration) (*ldap.Conn, error) {
	c, err := ldap.DialURL(l.URL, ldap.DialWithDialer(&net.Dialer{Timeout: timeout}))
	if err != nil {
		return nil, err
	}
	c.SetTimeout(timeout)
	if err := c.Bind(l.RootDN, l.RootPassword); err != nil {
		_ = c.Close()
		return nil, err
	}
	return c, nil
}

// ready is one readiness probe: the root DN binds on URL, and LDAPSURL
// accepts connections.
func (l *LDAP) ready(ctx context.Context) error {
	c, err := l.rootConn(time.Second)
	if err != nil {
		return err
	}
	_ = c.Close()
	var d net.Dialer
	pctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	conn, err := d.DialContext(pctx, "tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(l.tlsPort)))
	if err != nil {
		return fmt.Errorf("ldaps port: %w", err)
	}
	return conn.Close()
}

func newLDAP(dir string, users []LDAPUser) (*LDAP, error) {
	slapd, err := lookBinary("slapd")
	if err != nil {
		return nil, errors.New("testenv: slapd not found; run deploy/dev/ensure-deps.sh (Debian: apt-get install slapd ldap-utils)")
	}
	ldapadd, err := lookBinary("ldapadd")
	if err != nil {
		return nil, errors.New("testenv: ldapadd not found; run deploy/dev/ensure-deps.sh (Debian: apt-get install ldap-utils)")
	}
	for _, need := range []string{filepath.Join(ldapSchemaDir, "core.schema"), filepath.Join(ldapModuleDir, "back_mdb.so")} {
		if _, err := os.Stat(need); err != nil {
			return nil, fmt.Errorf("testenv: %w; the LDAP fixture expects Debian's slapd package (deploy/dev/ensure-deps.sh)", err)
		}
	}
	pki, err := newTestPKI(dir, "slapd")
	if err != nil {
		return nil, err
	}
	l := &LDAP{
		Suffix:    LDAPSuffix,
		UserBase:  "ou=people," + LDAPSuffix,
		GroupBase: "ou=groups," + LDAPSuffix,
		CAFile:    pki.CAFile,
		ServiceDN: "cn=svc," + LDAPSuffix,
		RootDN:    "cn=admin," + LDAPSuffix,
		dir:       dir,
	}
	if l.RootPassword, err = randomName("root-", 12); err != nil {
		return nil, err
	}
	if l.ServicePassword, err = randomName("svc-", 12); err != nil {
		return nil, err
	}
	confPath := filepath.Join(dir, "slapd.conf")
	if err := l.writeConfig(confPath, pki); err != nil {
		return nil, err
	}
	dataPath := filepath.Join(dir, "data.ldif")
	if err := l.writeData(dataPath, users); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(dir, "db"), 0o700); err != nil {
		return nil, err
	}
	logPath := filepath.Join(dir, "slapd.log")
	l.srv = &server{
		name:         "slapd",
		addr:         l.Addr,
		logPath:      logPath,
		startTimeout: ldapStartTimeout,
		stopTimeout:  ldapStopTimeout,
		spec: func() procSpec {
			return procSpec{
				name: "slapd",
				path: slapd,
				// -d keeps slapd in the foreground (its pid is ours to
				// stop); stats logs connections and operations.
				args:    []string{"-f", confPath, "-h", l.URL + "/ " + l.LDAPSURL + "/", "-d", "stats"},
				logPath: logPath,
			}
		},
		ready: l.ready,
	}
	for attempt := 1; ; attempt++ {
		if l.port, err = freePort(); err != nil {
			return nil, err
		}
		if l.tlsPort, err = freePort(); err != nil {
			return nil, err
		}
		l.URL = "ldap://" + l.Addr()
		l.LDAPSURL = "ldaps://127.0.0.1:" + strconv.Itoa(l.tlsPort)
		err = l.srv.start()
		var se *StartError
		if errors.As(err, &se) && se.addrInUse() && attempt < 3 {
			continue // another process took a port between FreePort and bind
		}
		if err != nil {
			return nil, err
		}
		break
	}
	return l, l.load(ldapadd, dataPath)
}

// load adds the entries of data.ldif with ldapadd as the root DN.
func (l *LDAP) load(ldapadd, dataPath string) error {
	pwFile := filepath.Join(l.dir, "root.pw") // ldapadd -y: the password, no newline
	if err := os.WriteFile(pwFile, []byte(l.RootPassword), 0o600); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), ldapStartTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, ldapadd, "-x", "-H", l.URL, "-D", l.RootDN, "-y", pwFile, "-f", dataPath).CombinedOutput()
	if err != nil {
		return fmt.Errorf("testenv: ldapadd %s: %w\n%s", dataPath, err, out)
	}
	return nil
}

// writeConfig writes slapd.conf: schemas, TLS, one mdb database with the
// memberof overlay, and the access rules.
func (l *LDAP) writeConfig(path string, pki testPKI) error {
	rootHash, err := sshaHash(l.RootPassword)
	if err != nil {
		return err
	}
	var b strings.Builder
	for _, s := range []string{"core", "cosine", "inetorgperson", "nis"} {
		fmt.Fprintf(&b, "include %s\n", filepath.Join(ldapSchemaDir, s+".schema"))
	}
	fmt.Fprintf(&b, `pidfile %[1]s/slapd.pid
argsfile %[1]s/slapd.args
modulepath %[2]s
moduleload back_mdb
moduleload memberof

TLSCACertificateFile %[3]s
TLSCertificateFile %[4]s
TLSCertificateKeyFile %[5]s

database mdb
suffix %[6]q
rootdn %[7]q
rootpw %[8]s
directory %[1]s/db
maxsize 16777216
dbnosync
index objectClass eq
index uid eq
index member eq

overlay memberof
memberof-group-oc groupOfNames
memberof-member-ad member
memberof-memberof-ad memberOf
memberof-refint true

access to attrs=userPassword
	by anonymous auth
	by * none
access to *
	by dn.exact=%[9]q read
	by anonymous auth
	by * none
`, l.dir, ldapModuleDir, pki.CAFile, pki.CertFile, pki.KeyFile, l.Suffix, l.RootDN, rootHash, l.ServiceDN)
	return os.WriteFile(path, []byte(b.String()), 0o600)
}

// writeData writes the entries as LDIF: the suffix, the service account,
// the two OUs, users and groups.
func (l *LDAP) writeData(path string, users []LDAPUser) error {
	svcHash, err := sshaHash(l.ServicePassword)
	if err != nil {
		return err
	}
	var b strings.Builder
	entry := func(dn string, attrs ...string) {
		ldifAttr(&b, "dn", dn)
		for i := 0; i+1 < len(attrs); i += 2 {
			ldifAttr(&b, attrs[i], attrs[i+1])
		}
		b.WriteByte('\n')
	}
	entry(l.Suffix, "objectClass", "dcObject", "objectClass", "organization", "dc", "example", "o", "Example")
	entry(l.ServiceDN, "objectClass", "organizationalRole", "objectClass", "simpleSecurityObject",
		"cn", "svc", "userPassword", svcHash)
	entry(l.UserBase, "objectClass", "organizationalUnit", "ou", "people")
	entry(l.GroupBase, "objectClass", "organizationalUnit", "ou", "groups")

	var ous, groups []string
	members := map[string][]string{}
	for _, u := range users {
		if u.OU != "" && !slices.Contains(ous, u.OU) {
			ous = append(ous, u.OU)
			entry("ou="+ldap.EscapeDN(u.OU)+","+l.UserBase, "objectClass", "organizationalUnit", "ou", u.OU)
		}
		attrs := []string{"objectClass", "inetOrgPerson", "uid", u.UID, "cn", u.UID, "sn", u.UID}
		if u.Mail != "" {
			attrs = append(attrs, "mail", u.Mail)
		}
		if u.Password != "" {
			h, err := sshaHash(u.Password)
			if err != nil {
				return err
			}
			attrs = append(attrs, "userPassword", h)
		}
		entry(l.UserDN(u), attrs...)
		for _, g := range u.Groups {
			if _, ok := members[g]; !ok {
				groups = append(groups, g)
			}
			members[g] = append(members[g], l.UserDN(u))
		}
	}
	for _, g := range groups {
		attrs := []string{"objectClass", "groupOfNames", "cn", g}
		for _, m := range members[g] {
			attrs = append(attrs, "member", m)
		}
		entry(l.GroupDN(g), attrs...)
	}
	return os.WriteFile(path, []byte(b.String()), 0o600)
}

// ldifAttr writes one "attr: value" line, base64-encoded ("attr:: ...")
// when RFC 2849 does not allow the value as it is.
func ldifAttr(b *strings.Builder, attr, value string) {
	safe := value == "" || !strings.ContainsAny(value[:1], " :<") && !strings.HasSuffix(value, " ")
	for i := 0; safe && i < len(value); i++ {
		c := value[i]
		safe = c != 0 && c != '\n' && c != '\r' && c < 0x80
	}
	if safe {
		fmt.Fprintf(b, "%s: %s\n", attr, value)
		return
	}
	fmt.Fprintf(b, "%s:: %s\n", attr, base64.StdEncoding.EncodeToString([]byte(value)))
}

// sshaHash returns password in slapd's {SSHA} scheme: SHA-1 of the
// password and an 8-byte salt, followed by the salt, in base64.
func sshaHash(password string) (string, error) {
	salt := make([]byte, 8)
	if _, err := rand.Read(salt); err != nil {
		return "", err
	}
	h := sha1.Sum(append([]byte(password), salt...))
	return "{SSHA}" + base64.StdEncoding.EncodeToString(append(h[:], salt...)), nil
}
