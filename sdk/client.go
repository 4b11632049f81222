package sdk

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/shardjob/shardjob/sdk/protocol"
)

const (
	// maxResponseBytes bounds what is read of an admin response.
	maxResponseBytes = 32 << 20
	// maxAdmins bounds the admin list (configured + announced replicas).
	maxAdmins = 64
)

// AdminError is a non-2xx answer of an admin.
type AdminError struct {
	Admin      string // base URL of the admin
	Path       string // request path
	StatusCode int
	Message    string // the protocol.Error message, or the start of the body
}

func (e *AdminError) Error() string {
	return fmt.Sprintf("admin %s: POST %s: %d %s: %s", e.Admin, e.Path, e.StatusCode, http.StatusText(e.StatusCode), e.Message)
}

// adminClient sends signed requests to the admins, failing over between them
// in order and sticking to the last one that answered.
type adminClient struct {
	http   *http.Client
	secret string
	log    *slog.Logger

	mu     sync.Mutex
	admins []string
	cur    int // index of the admin tried first
}

func newAdminClient(hc *http.Client, secret string, admins []string, log *slog.Logger) *adminClient {
	return &adminClient{http: hc, secret: secret, admins: append([]string(nil), admins...), log: log}
}

// current returns the admin tried first.
func (c *adminClient) current() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.admins[c.cur]
}

// addAdmins appends replicas announced by an admin that are not known yet.
// They come after the configured ones in the failover order.
func (c *adminClient) addAdmins(urls []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
next:
	for _, u := range urls {
		u = strings.TrimRight(strings.TrimSpace(u), "/")
		if err := checkBaseURL(u); err != nil {
			c.log.Warn("ignoring admin replica announced by the admin", "url", u, "err", err)
			continue
		}
		for _, known := range c.admins {
			if known == u {
				continue next
			}
		}
		if len(c.admins) >= maxAdmins {
			c.log.Warn("ignoring admin replica announced by the admin: too many admins", "url", u, "max", maxAdmins)
			return
		}
		c.admins = append(c.admins, u)
		c.log.Info("learned admin replica", "url", u)
	}
}

// post sends in as JSON to path on the admins, starting with the current
// one, and decodes the first 2xx answer into out (when out is not nil). It
// returns the admin that answered, or an error joining every admin's failure.
func (c *adminClient) post(ctx context.Context, path string, in, out any) (string, error) {
	return c.postHedged(ctx, path, in, out, 0)
}

// postHedged is post that does not wait for a slow admin: when hedgeAfter
// is positive and the admin asked last has not answered within it, the same
// request goes to the next admin too (and so on), and the first 2xx answer
// wins; the slower requests are abandoned. An admin that fails is followed
// by the next at once. With hedgeAfter 0 the admins are asked one after
// the other. Only idempotent requests (heartbeats) may be hedged: an admin
// may act on a request whose answer is abandoned.
func (c *adminClient) postHedged(ctx context.Context, path string, in, out any, hedgeAfter time.Duration) (string, error) {
	body, err := json.Marshal(in)
	if err != nil {
		return "", fmt.Errorf("encode %s request: %w", path, err)
	}
	c.mu.Lock()
	admins, start := append([]string(nil), c.admins...), c.cur
	c.mu.Unlock()

	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // abandons the slower requests
	type answer struct {
		idx  int
		data []byte
		err  error
	}
	answers := make(chan answer, len(admins)) // never blocks a sender
	asked := 0
	ask := func() {
		idx := (start + asked) % len(admins)
		asked++
		go func() {
			data, err := c.postOne(ctx, admins[idx], path, body)
			answers <- answer{idx: idx, data: data, err: err}
		}()
	}
	var hedge <-chan time.Time
	if hedgeAfter > 0 {
		t := time.NewTicker(hedgeAfter)
		defer t.Stop()
		hedge = t.C
	}
	ask()
	var errs []error
	for waiting := 1; waiting > 0; {
		select {
		case a := <-answers:
			waiting--
			if a.err == nil {
				return c.answered(admins, start, a.idx, path, a.data, out)
			}
			errs = append(errs, a.err)
			if asked < len(admins) && ctx.Err() == nil {
				ask()
				waiting++
			}
		case <-hedge:
			if asked < len(admins) {
				c.log.Debug("admin slow to answer: asking the next one too", "path", path, "admin", admins[(start+asked-1)%len(admins)], "after", hedgeAfter)
				ask()
				waiting++
			}
		}
	}
	return "", fmt.Errorf("no admin answered POST %s: %w", path, errors.Join(errs...))
}

// answered makes admins[idx] the admin tried first from now on and decodes
// its answer data into out (when out is not nil).
func (c *adminClient) answered(admins []string, start, idx int, path string, data []byte, out any) (string, error) {
	c.mu.Lock()
	if c.cur != idx && len(c.admins) > idx && c.admins[idx] == admins[idx] {
		c.log.Info("switched admin", "from", admins[start], "to", admins[idx])
		c.cur = idx
	}
	c.mu.Unlock()
	if out != nil && len(bytes.TrimSpace(data)) > 0 {
		if err := json.Unmarshal(data, out); err != nil {
			return "", fmt.Errorf("admin %s: POST %s: decode response: %w", admins[idx], path, err)
		}
	}
	return admins[idx], nil
}

// postOne sends body to one admin and returns its 2xx answer.
func (c *adminClient) postOne(ctx context.Context, admin, path string, body []byte) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, admin+path, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("admin %s: build request: %w", admin, err)
	}
	req.Header.Set("Content-Type", "application/json")
	protocol.Sign(req, c.secret, body, time.Now())
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("admin %s: %w", admin, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
	if err != nil {
		return nil, fmt.Errorf("admin %s: POST %s: read response: %w", admin, path, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		msg := strings.TrimSpace(string(data))
		var pe protocol.Error
		if json.Unmarshal(data, &pe) == nil && pe.Error != "" {
			msg = pe.Error
		} else if len(msg) > 200 {
			msg = msg[:200] + "…"
		}
		return nil, &AdminError{Admin: admin, Path: path, StatusCode: resp.StatusCode, Message: msg}
	}
	return data, nil
}
