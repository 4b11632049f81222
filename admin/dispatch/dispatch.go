package dispatch

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/shardjob/shardjob/sdk/protocol"
)

// Pusher sends work to executors: Client in production; the XXL-JOB
// router (admin/xxljob) is one too, in front of a Client. The scheduler
// pushes through a Pusher and needs to know no more about the executor's
// protocol.
type Pusher interface {
	Assign(ctx context.Context, baseURL string, req protocol.AssignRequest) (protocol.AssignResponse, error)
	Cancel(ctx context.Context, baseURL string, req protocol.CancelRequest) error
	Release(ctx context.Context, baseURL string, req protocol.ReleaseRequest) (protocol.ReleaseResponse, error)
}

var _ Pusher = (*Client)(nil)

// Client pushes signed requests to executors. It is safe for concurrent use.
type Client struct {
	secret string
	http   *http.Client
	now    func() time.Time
}

// New returns a Client. timeout bounds each request (default 5s).
func New(secret string, timeout time.Duration) (*Client, error) {
	if err := protocol.ValidateSecret(secret); err != nil {
		return nil, fmt.Errorf("executor secret: %w", err)
	}
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	return &Client{
		secret: secret,
		http: &http.Client{
			Timeout: timeout,
			// Executors never redirect; following one would leak signed requests.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		now: time.Now,
	}, nil
}

// Assign pushes assignments to the executor at baseURL.
func (c *Client) Assign(ctx context.Context, baseURL string, req protocol.AssignRequest) (protocol.AssignResponse, error) {
	var resp protocol.AssignResponse
	err := c.post(ctx, baseURL, protocol.PathAssign, req, &resp)
	return resp, err
}

// Cancel asks the executor at baseURL to stop tokens.
func (c *Client) Cancel(ctx context.Context, baseURL string, req protocol.CancelRequest) error {
	return c.post(ctx, baseURL, protocol.PathCancel, req, nil)
}

// Release asks the executor at baseURL to give back queued, unstarted
// tokens; the response lists those it gave back.
func (c *Client) Release(ctx context.Context, baseURL string, req protocol.ReleaseRequest) (protocol.ReleaseResponse, error) {
	var resp protocol.ReleaseResponse
	err := c.post(ctx, baseURL, protocol.PathRelease, req, &resp)
	return resp, err
}

func (c *Client) post(ctx context.Context, baseURL, path string, in, out any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return fmt.Errorf("encode %s: %w", path, err)
	}
	url := strings.TrimRight(baseURL, "/") + path
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("push to %s: %w", url, err)
	}
	req.Header.Set("Content-Type", "application/json")
	protocol.Sign(req, c.secret, body, c.now())
	res, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("push to %s: %w", url, err)
	}
	defer res.Body.Close()
	data, err := io.ReadAll(io.LimitReader(res.Body, 4<<20))
	if err != nil {
		return fmt.Errorf("read reply of %s: %w", url, err)
	}
	if res.StatusCode/100 != 2 {
		var pe protocol.Error
		_ = json.Unmarshal(data, &pe)
		if pe.Error == "" {
			pe.Error = strings.TrimSpace(string(data))
		}
		return &StatusError{URL: url, Code: res.StatusCode, Message: pe.Error}
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			return fmt.Errorf("decode reply of %s: %w", url, err)
		}
	}
	return nil
}

// StatusError is a non-2xx reply of an executor.
type StatusError struct {
	URL     string
	Code    int
	Message string
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("executor %s answered %d: %s", e.URL, e.Code, e.Message)
}

// IsUnauthorized reports whether err is a 401 from an executor (secret mismatch).
func IsUnauthorized(err error) bool {
	var se *StatusError
	return errors.As(err, &se) && se.Code == http.StatusUnauthorized
}
