package alarm_test

import (
	"context"
	"encoding/base64"
	"io"
	"mime"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"net/textproto"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/alarm"
)

// smtpSink is a tiny SMTP server on 127.0.0.1: EHLO, AUTH PLAIN, MAIL,
// RCPT, DATA, RSET, NOOP, QUIT. It keeps every accepted mail.
type smtpSink struct {
	ln       net.Listener
	mails    chan sunkMail
	rejectTo string // RCPT of this address is refused with 550
	mu       sync.Mutex
	conns    map[net.Conn]bool
	wg       sync.WaitGroup
}

type sunkMail struct {
	auth string // decoded AUTH PLAIN response
	from string
	to   []string
	data string
}

func startSMTPSink(t *testing.T) *smtpSink {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	s := &smtpSink{ln: ln, mails: make(chan sunkMail, 16), conns: map[net.Conn]bool{}}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.conns[c] = true
			s.mu.Unlock()
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				s.serve(c)
			}()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		s.mu.Lock()
		for c := range s.conns {
			_ = c.Close()
		}
		s.mu.Unlock()
		s.wg.Wait()
	})
	return s
}

func (s *smtpSink) addr() string { return s.ln.Addr().String() }

func (s *smtpSink) serve(c net.Conn) {
	defer c.Close()
	tp := textproto.NewConn(c)
	reply := func(lines ...string) {
		for _, l := range lines {
			_ = tp.PrintfLine("%s", l)
		}
	}
	reply("220 sink.test ESMTP ready")
	var m sunkMail
	for {
		line, err := tp.ReadLine()
		if err != nil {
			return
		}
		verb, arg, _ := strings.Cut(line, " ")
		switch strings.ToUpper(verb) {
		case "EHLO":
			reply("250-sink.test", "250-8BITMIME", "250 AUTH PLAIN")
		case "HELO", "NOOP":
			reply("250 ok")
		case "AUTH":
			_, b64, _ := strings.Cut(arg, " ")
			raw, _ := base64.StdEncoding.DecodeString(b64)
			m.auth = string(raw)
			reply("235 authenticated")
		case "MAIL":
			m.from = addrOf(arg)
			reply("250 ok")
		case "RCPT":
			to := addrOf(arg)
			if to == s.rejectTo {
				reply("550 no such user")
				continue
			}
			m.to = append(m.to, to)
			reply("250 ok")
		case "DATA":
			reply("354 go ahead")
			data, err := tp.ReadDotBytes()
			if err != nil {
				return
			}
			m.data = string(data)
			s.mails <- m
			m = sunkMail{auth: m.auth}
			reply("250 queued")
		case "RSET":
			m = sunkMail{auth: m.auth}
			reply("250 ok")
		case "QUIT":
			reply("221 bye")
			return
		default:
			reply("502 not implemented")
		}
	}
}

// addrOf returns the address in "FROM:<a> PARAMS" or "TO:<a>".
func addrOf(arg string) string {
	_, rest, _ := strings.Cut(arg, "<")
	a, _, _ := strings.Cut(rest, ">")
	return a
}

func (s *smtpSink) next(t *testing.T) sunkMail {
	t.Helper()
	select {
	case m := <-s.mails:
		return m
	case <-time.After(10 * time.Second):
		t.Fatal("no mail reached the sink within 10s")
		return sunkMail{}
	}
}

func TestSMTPDeliversPlainTextMail(t *testing.T) {
	t.Parallel()
	sink := startSMTPSink(t)
	ch, err := alarm.NewSMTP(alarm.SMTPConfig{Addr: sink.addr(), From: "shardjob@example.com", To: []string{"oncall@example.com", "lead@example.com"},
		Username: "shardjob", Password: "pw-from-env"})
	require.NoError(t, err)
	m := msg
	m.Title = "shardjob [critical] run_failed on job 7 — 结算"
	m.Text = "line one\n.line starting with a dot\n" + strings.Repeat("long ", 40)
	require.NoError(t, ch.Send(context.Background(), m))

	got := sink.next(t)
	require.Equal(t, "\x00shardjob\x00pw-from-env", got.auth)
	require.Equal(t, "shardjob@example.com", got.from)
	require.Equal(t, []string{"oncall@example.com", "lead@example.com"}, got.to)
	parsed, err := mail.ReadMessage(strings.NewReader(got.data))
	require.NoError(t, err)
	subject, err := new(mime.WordDecoder).DecodeHeader(parsed.Header.Get("Subject"))
	require.NoError(t, err)
	require.Equal(t, m.Title, subject)
	require.Equal(t, "text/plain; charset=utf-8", parsed.Header.Get("Content-Type"))
	body, err := io.ReadAll(quotedprintable.NewReader(parsed.Body))
	require.NoError(t, err)
	require.Equal(t, m.Text+"\n", string(body)) // the sink reads lines as LF

	// A per-job route overrides the recipients.
	m.To = []string{"owner@example.com"}
	require.NoError(t, ch.Send(context.Background(), m))
	require.Equal(t, []string{"owner@example.com"}, sink.next(t).to)
}

func TestSMTPFailures(t *testing.T) {
	t.Parallel()
	sink := startSMTPSink(t)
	sink.rejectTo = "gone@example.com"
	ch, err := alarm.NewSMTP(alarm.SMTPConfig{Addr: sink.addr(), From: "shardjob@example.com", To: []string{"gone@example.com"}})
	require.NoError(t, err)
	require.ErrorContains(t, ch.Send(context.Background(), msg), "550")

	ch, err = alarm.NewSMTP(alarm.SMTPConfig{Addr: sink.addr(), From: "shardjob@example.com", To: []string{"a@example.com"}, RequireTLS: true})
	require.NoError(t, err)
	require.ErrorContains(t, ch.Send(context.Background(), msg), "does not offer STARTTLS")

	ch, err = alarm.NewSMTP(alarm.SMTPConfig{Addr: sink.addr(), From: "shardjob@example.com"})
	require.NoError(t, err)
	require.ErrorContains(t, ch.Send(context.Background(), msg), "no recipients")

	_, err = alarm.NewSMTP(alarm.SMTPConfig{Addr: sink.addr(), From: "Ops <ops@example.com>"})
	require.ErrorContains(t, err, "from")
	_, err = alarm.NewSMTP(alarm.SMTPConfig{Addr: sink.addr(), From: "ops@example.com", To: []string{"x@example.com\r\nBcc: evil@example.com"}})
	require.ErrorContains(t, err, "to[0]")
}
