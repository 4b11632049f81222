package xxljob

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// Client calls XXL-JOB executors (their beat, idleBeat, run, kill and log
// endpoints). It is safe for concurrent use.
type Client struct {
	http *http.Client
}

// NewClient returns a Client whose calls time out after timeout (default
// 5s) and connect only to the hosts allowed (nil: DefaultAllowedHosts).
// CloseIdleConnections when done with it.
func NewClient(timeout time.Duration, allowed *AllowedHosts) *Client {
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	if allowed == nil {
		allowed, _ = ParseAllowedHosts(nil)
	}
	return &Client{http: &http.Client{
		Timeout: timeout,
		Transport: &http.Transport{
			Proxy:               nil, // the allow-list checks the executor's address, not a proxy's
			DialContext:         allowed.dial,
			MaxIdleConnsPerHost: 2,
			IdleConnTimeout:     30 * time.Second,
		},
		// Executors never redirect; following one would send the token elsewhere.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// CloseIdleConnections closes the kept-alive connections to executors.
func (c *Client) CloseIdleConnections() { c.http.CloseIdleConnections() }

// CallError is an executor's answer with a ReturnT code other than 200: the
// executor got the call and refused it.
type CallError struct {
	URL  string
	Code int
	Msg  string
}

func (e *CallError) Error() string {
	return fmt.Sprintf("XXL-JOB executor %s answered code %d: %s", e.URL, e.Code, e.Msg)
}

// Busy reports a refusal of a run because a task of the same job id is
// running on the executor ("There are tasks running"): executors that run
// one task per job id at a time refuse the next instead of queueing it.
// It is not a failure of the slot: the admin sends the run again later.
func (e *CallError) Busy() bool { return e.Code != CodeSuccess && busyRE.MatchString(e.Msg) }

// Beat asks whether the executor is alive.
func (c *Client) Beat(ctx context.Context, address, token string) error {
	return c.call(ctx, address, "beat", token, nil, nil)
}

// IdleBeat asks whether the executor is idle for a job (no run of it going
// on or queued); a CallError means busy.
func (c *Client) IdleBeat(ctx context.Context, address, token string, jobID int64) error {
	return c.call(ctx, address, "idleBeat", token, IdleBeatParam{JobID: jobID}, nil)
}

// Run starts (or, with SERIAL_EXECUTION, queues) a run on the executor. A
// refusal is a *CallError (Busy when a task of the job id is running), an
// unreadable answer wraps ErrUnreadableAnswer.
func (c *Client) Run(ctx context.Context, address, token string, p TriggerParam) error {
	return c.call(ctx, address, "run", token, p, nil)
}

// Kill stops the run of the job id on the executor and drops its queued
// runs (jobID is the per-slot id, SlotJobID).
func (c *Client) Kill(ctx context.Context, address, token string, jobID int64) error {
	return c.call(ctx, address, "kill", token, KillParam{JobID: jobID}, nil)
}

// Log reads the log of a run from line from (1-based).
func (c *Client) Log(ctx context.Context, address, token string, p LogParam) (LogResult, error) {
	var out LogResult
	err := c.call(ctx, address, "log", token, p, &out)
	return out, err
}

func (c *Client) call(ctx context.Context, address, op, token string, in, out any) error {
	url := strings.TrimRight(address, "/") + "/" + op
	var body []byte
	if in != nil {
		var err error
		if body, err = json.Marshal(in); err != nil {
			return fmt.Errorf("encode %s: %w", op, err)
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("call %s: %w", url, err)
	}
	req.Header.Set("Content-Type", "application/json;charset=UTF-8")
	req.Header.Set(TokenHeader, token)
	res, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("call %s: %w", url, err)
	}
	defer res.Body.Close()
	data, err := io.ReadAll(io.LimitReader(res.Body, 4<<20))
	if err != nil {
		return fmt.Errorf("read answer of %s: %w", url, err)
	}
	if res.StatusCode/100 != 2 {
		return fmt.Errorf("call %s: HTTP status %d: %s", url, res.StatusCode, strings.TrimSpace(string(data[:min(len(data), 200)])))
	}
	rt, err := parseAnswer(data)
	if err != nil {
		return fmt.Errorf("%s answered %.200q: %w", url, data, err)
	}
	if rt.Code != CodeSuccess {
		return &CallError{URL: url, Code: rt.Code, Msg: rt.Message()}
	}
	if out != nil && len(rt.Content) > 0 && string(rt.Content) != "null" {
		if err := json.Unmarshal(rt.Content, out); err != nil {
			return fmt.Errorf("content of %s: %w", url, err)
		}
	}
	return nil
}
