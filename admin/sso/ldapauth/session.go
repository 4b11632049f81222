package ldapauth

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/go-ldap/ldap/v3"

	"github.com/shardjob/shardjob/admin/sso"
)

// session is the connection of one call, bound as the service account (or
// anonymous). Each step has its own deadline (LDAPConfig.Timeout, or the
// context's when sooner), set on the network connection so that it bounds
// TLS handshakes as well as LDAP operations; cancelling the context closes
// the connection.
type session struct {
	d    *Directory
	ctx  context.Context
	raw  net.Conn
	c    *ldap.Conn
	stop func() bool // stops closing raw when ctx is done
}

// connect dials, sets up TLS and binds as the service account.
func (d *Directory) connect(ctx context.Context) (*session, error) {
	deadline := d.deadline(ctx)
	dctx, cancel := context.WithDeadline(ctx, deadline)
	var dialer net.Dialer
	raw, err := dialer.DialContext(dctx, "tcp", d.hostport)
	cancel()
	if err != nil {
		return nil, d.unavailable(ctx, "connect", err, deadline)
	}
	s := &session{d: d, ctx: ctx, raw: raw}
	s.stop = context.AfterFunc(ctx, func() { _ = raw.Close() })

	conn := raw
	if d.tls {
		tc := tls.Client(raw, d.tlsConf)
		if err := s.do("TLS handshake", func() error { return tc.HandshakeContext(ctx) }); err != nil {
			s.close()
			return nil, err
		}
		conn = tc
	}
	s.c = ldap.NewConn(conn, d.tls)
	s.c.Start()
	s.c.SetTimeout(d.cfg.Timeout)
	if d.cfg.StartTLS {
		if err := s.do("StartTLS", func() error { return s.c.StartTLS(d.tlsConf) }); err != nil {
			s.close()
			return nil, err
		}
	}
	if d.cfg.BindDN != "" {
		err := s.do("bind as the service account", func() error { return s.c.Bind(d.cfg.BindDN, d.cfg.BindPassword) })
		if ldap.IsErrorWithCode(err, ldap.LDAPResultInvalidCredentials) {
			err = fmt.Errorf("%w (check ldap.bind_dn %s and its password)", err, d.cfg.BindDN)
		}
		if err != nil {
			s.close()
			return nil, err
		}
	}
	return s, nil
}

// close closes the connection; the LDAP client's goroutines are gone when
// it returns.
func (s *session) close() {
	s.stop()
	if s.c != nil {
		_ = s.c.Close()
		return
	}
	_ = s.raw.Close()
}

// do runs one step under its deadline; an error is returned wrapping
// sso.ErrUnavailable (and the LDAP client's error: callers look for result
// codes that mean something else).
func (s *session) do(what string, f func() error) error {
	deadline := s.d.deadline(s.ctx)
	_ = s.raw.SetDeadline(deadline)
	if err := f(); err != nil {
		return s.d.unavailable(s.ctx, what, err, deadline)
	}
	return nil
}

// deadline is the deadline of one step started now.
func (d *Directory) deadline(ctx context.Context) time.Time {
	deadline := time.Now().Add(d.cfg.Timeout)
	if dl, ok := ctx.Deadline(); ok && dl.Before(deadline) {
		return dl
	}
	return deadline
}

// unavailable describes the failed step what, saying why when it can tell.
func (d *Directory) unavailable(ctx context.Context, what string, err error, deadline time.Time) error {
	var (
		verify  *tls.CertificateVerificationError
		unknown x509.UnknownAuthorityError
		host    x509.HostnameError
	)
	ctxDeadline, _ := ctx.Deadline()
	passed := !time.Now().Before(deadline)
	switch {
	case ctx.Err() != nil:
		err = fmt.Errorf("%w: %w", context.Cause(ctx), err)
	case passed && deadline.Equal(ctxDeadline):
		// The connection's deadline was the context's, which is about
		// to say so.
		err = fmt.Errorf("%w: %w", context.DeadlineExceeded, err)
	case passed:
		err = fmt.Errorf("no answer within %s (ldap.timeout): %w", d.cfg.Timeout, err)
	case errors.As(err, &verify), errors.As(err, &unknown), errors.As(err, &host),
		strings.Contains(err.Error(), "x509: "): // StartTLS: go-ldap keeps only the text
		cert := ""
		if verify != nil && len(verify.UnverifiedCertificates) > 0 {
			c := verify.UnverifiedCertificates[0]
			cert = fmt.Sprintf(" (subject %q, issuer %q)", c.Subject, c.Issuer)
		}
		err = fmt.Errorf("%w; the server's certificate%s was not accepted: set ldap.ca_file to the CA that signed it "+
			"and use a host name (or IP address) the certificate names in ldap.url", err, cert)
	}
	return fmt.Errorf("%w: %s: %s: %w", sso.ErrUnavailable, d.cfg.URL, what, err)
}
