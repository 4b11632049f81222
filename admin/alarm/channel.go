package alarm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Channel delivers messages to people. Send must honour ctx (deadline and
// cancellation) and return an error when the receiver did not accept the
// message; the notifier then retries with backoff.
type Channel interface {
	Send(ctx context.Context, m Message) error
}

// Channel types, as written in the channels file.
const (
	TypeWebhook  = "webhook"
	TypeSlack    = "slack"
	TypeDingTalk = "dingtalk"
	TypeFeishu   = "feishu"
	TypeSMTP     = "smtp"
)

// Endpoint is a named, configured channel.
type Endpoint struct {
	// Name identifies the channel in routes and the API.
	Name string
	// Type is one of the Type constants.
	Type string
	// Default channels receive every alarm; the others only the alarms of
	// jobs routed to them.
	Default bool
	// Channel sends the messages.
	Channel Channel
}

// Email reports whether the channel takes per-route email recipients.
func (e Endpoint) Email() bool { return e.Type == TypeSMTP }

// DefaultHTTPTimeout bounds one HTTP delivery.
const DefaultHTTPTimeout = 10 * time.Second

// maxResponse bounds how much of a receiver's answer is read.
const maxResponse = 64 << 10

// httpPoster posts JSON to one URL: a timeout, no redirects followed (a
// redirect is an error: the URL is wrong or the receiver moved), no
// keep-alive (alarms are rare; nothing lingers after Close).
type httpPoster struct {
	url    string
	client *http.Client
}

func newHTTPPoster(rawURL string, timeout time.Duration) (*httpPoster, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("url: %w", err)
	}
	if u.Scheme != "https" && u.Scheme != "http" || u.Host == "" {
		return nil, fmt.Errorf("url %q: must be an absolute http(s) URL", redactURL(rawURL))
	}
	if timeout <= 0 {
		timeout = DefaultHTTPTimeout
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DisableKeepAlives = true
	return &httpPoster{url: rawURL, client: &http.Client{
		Timeout:   timeout,
		Transport: tr,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}}, nil
}

// post sends body to target (the poster's URL when empty) and returns the
// response body of a 2xx answer.
func (p *httpPoster) post(ctx context.Context, target string, body []byte, header http.Header) ([]byte, error) {
	if target == "" {
		target = p.url
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("build request: %w", err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	req.Header.Set("User-Agent", "shardjob-alarm/1")
	res, err := p.client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the URL may hold a token: do not log it
		}
		return nil, fmt.Errorf("post to %s: %w", redactURL(p.url), err)
	}
	defer res.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(res.Body, maxResponse))
	if res.StatusCode >= 300 && res.StatusCode < 400 {
		return nil, fmt.Errorf("post to %s: redirected (%s) to %q; redirects are not followed: configure the final URL", redactURL(p.url), res.Status, res.Header.Get("Location"))
	}
	if res.StatusCode < 200 || res.StatusCode >= 300 {
		return nil, fmt.Errorf("post to %s: %s: %s", redactURL(p.url), res.Status, snippet(data))
	}
	return data, nil
}

// redactURL drops the query and user info of a URL: webhook URLs often
// carry their token there.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(invalid URL)"
	}
	u.User, u.RawQuery, u.Fragment = nil, "", ""
	if strings.Count(u.Path, "/") > 2 { // Slack-style /services/T/B/secret
		u.Path = u.Path[:strings.Index(u.Path[1:], "/")+1] + "/…"
	}
	return u.String()
}

func snippet(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	if s == "" {
		s = "(empty body)"
	}
	return s
}
