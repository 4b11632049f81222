package alarm

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"errors"
	"fmt"
	"mime"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"net/smtp"
	"strings"
	"time"
)

// SMTPConfig configures an email channel.
type SMTPConfig struct {
	// Addr is the server's host:port, e.g. smtp.example.com:587. Required.
	Addr string
	// Username and Password enable SMTP AUTH PLAIN when Username is set.
	// net/smtp refuses to send them unencrypted except to localhost.
	Username, Password string
	// From is the sender address. Required.
	From string
	// To are the default recipients; per-job routes may name others.
	To []string
	// RequireTLS fails delivery when the server does not offer STARTTLS.
	// Default false: STARTTLS is used whenever the server offers it.
	RequireTLS bool
	// Timeout bounds one delivery (connect to QUIT). Default 30s.
	Timeout time.Duration
	// TLSConfig for STARTTLS; default verifies the certificate against the
	// host of Addr.
	TLSConfig *tls.Config
	// HelloName is the name sent in EHLO. Default "localhost".
	HelloName string
}

// SMTP sends plain-text email through one server (net/smtp): STARTTLS when
// the server offers it, optional AUTH.
type SMTP struct {
	cfg  SMTPConfig
	host string
	now  func() time.Time
}

// NewSMTP validates cfg and returns an email channel.
func NewSMTP(cfg SMTPConfig) (*SMTP, error) {
	host, _, err := net.SplitHostPort(cfg.Addr)
	if err != nil || host == "" {
		return nil, fmt.Errorf("addr %q: must be host:port, e.g. smtp.example.com:587", cfg.Addr)
	}
	if err := checkAddress(cfg.From); err != nil {
		return nil, fmt.Errorf("from: %w", err)
	}
	for i, to := range cfg.To {
		if err := checkAddress(to); err != nil {
			return nil, fmt.Errorf("to[%d]: %w", i, err)
		}
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 30 * time.Second
	}
	if cfg.HelloName == "" {
		cfg.HelloName = "localhost"
	}
	return &SMTP{cfg: cfg, host: host, now: time.Now}, nil
}

// checkAddress accepts a bare address (no display name, no CR/LF).
func checkAddress(a string) error {
	p, err := mail.ParseAddress(a)
	if err != nil || p.Address != a || p.Name != "" {
		return fmt.Errorf("%q is not a plain email address like ops@example.com", a)
	}
	return nil
}

var errNoRecipients = errors.New("smtp: no recipients: set \"to\" on the channel or route the job to an address")

// Send implements Channel: m.To, or the channel's To when m.To is empty.
func (s *SMTP) Send(ctx context.Context, m Message) (err error) {
	to := m.To
	if len(to) == 0 {
		to = s.cfg.To
	}
	if len(to) == 0 {
		return errNoRecipients
	}
	for _, a := range to {
		if err := checkAddress(a); err != nil {
			return fmt.Errorf("smtp: recipient: %w", err)
		}
	}
	msg, err := s.compose(m, to)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", s.cfg.Addr)
	if err != nil {
		return fmt.Errorf("smtp: connect to %s: %w", s.cfg.Addr, err)
	}
	stop := context.AfterFunc(ctx, func() { _ = conn.Close() }) // unblocks every read and write
	defer stop()
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	c, err := smtp.NewClient(conn, s.host)
	if err != nil {
		_ = conn.Close()
		return s.fail(ctx, "greeting", err)
	}
	defer func() { _ = c.Close() }() // after Quit, or on a failed session: Quit decides the mail's fate
	if err := c.Hello(s.cfg.HelloName); err != nil {
		return s.fail(ctx, "EHLO", err)
	}
	if ok, _ := c.Extension("STARTTLS"); ok {
		tc := s.cfg.TLSConfig
		if tc == nil {
			tc = &tls.Config{ServerName: s.host, MinVersion: tls.VersionTLS12}
		}
		if err := c.StartTLS(tc); err != nil {
			return s.fail(ctx, "STARTTLS", err)
		}
	} else if s.cfg.RequireTLS {
		return fmt.Errorf("smtp: %s does not offer STARTTLS and require_tls is set", s.cfg.Addr)
	}
	if s.cfg.Username != "" {
		if err := c.Auth(smtp.PlainAuth("", s.cfg.Username, s.cfg.Password, s.host)); err != nil {
			return s.fail(ctx, "AUTH", err)
		}
	}
	if err := c.Mail(s.cfg.From); err != nil {
		return s.fail(ctx, "MAIL FROM", err)
	}
	for _, a := range to {
		if err := c.Rcpt(a); err != nil {
			return s.fail(ctx, "RCPT TO "+a, err)
		}
	}
	w, err := c.Data()
	if err != nil {
		return s.fail(ctx, "DATA", err)
	}
	if _, err := w.Write(msg); err != nil {
		return s.fail(ctx, "DATA", err)
	}
	if err := w.Close(); err != nil {
		return s.fail(ctx, "end of DATA", err)
	}
	if err := c.Quit(); err != nil {
		return s.fail(ctx, "QUIT", err)
	}
	return nil
}

func (s *SMTP) fail(ctx context.Context, step string, err error) error {
	if ctx.Err() != nil {
		err = fmt.Errorf("%w (%v)", ctx.Err(), err)
	}
	return fmt.Errorf("smtp %s at %s: %w", step, s.cfg.Addr, err)
}

// compose builds the RFC 5322 message: plain text, UTF-8, quoted-printable.
func (s *SMTP) compose(m Message, to []string) ([]byte, error) {
	var b strings.Builder
	subject := strings.Map(func(r rune) rune {
		if r == '\r' || r == '\n' {
			return ' '
		}
		return r
	}, m.Title)
	hdr := [][2]string{
		{"From", s.cfg.From},
		{"To", strings.Join(to, ", ")},
		{"Subject", mime.QEncoding.Encode("utf-8", subject)},
		{"Date", s.now().Format(time.RFC1123Z)},
		{"Message-ID", "<" + rand.Text() + "@shardjob>"},
		{"MIME-Version", "1.0"},
		{"Content-Type", "text/plain; charset=utf-8"},
		{"Content-Transfer-Encoding", "quoted-printable"},
		{"Auto-Submitted", "auto-generated"},
	}
	for _, h := range hdr {
		b.WriteString(h[0] + ": " + h[1] + "\r\n")
	}
	b.WriteString("\r\n")
	qp := quotedprintable.NewWriter(&b)
	if _, err := qp.Write([]byte(strings.ReplaceAll(m.Text, "\n", "\r\n") + "\r\n")); err != nil {
		return nil, err
	}
	if err := qp.Close(); err != nil {
		return nil, err
	}
	return []byte(b.String()), nil
}
