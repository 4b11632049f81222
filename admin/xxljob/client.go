package xxljob

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Client calls XXL-JOB executors (their beat, idleBeat, run or trigger,
// kill and log endpoints). It is safe for concurrent use.
type Client struct {
	http *http.Client

	mu sync.Mutex
	// learned: addresses whose executor answered a run under the other
	// generation's endpoint than the one recorded (Run).
	learned map[string]Generation
}

// Target is an XXL-JOB executor the admin calls: where it listens, its
// app (sent in AppNameHeader), the app's access token and the protocol
// generation it speaks.
type Target struct {
	Address    string
	App        string
	Token      string
	Generation Generation
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
	return &Client{learned: map[string]Generation{}, http: &http.Client{
		Timeout: timeout,
		Transport: &http.Transport{
			Proxy:               nil, // the allow-list checks the executor's address, not a proxy's
			DialContext:         allowed.DialContext,
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
func (c *Client) Beat(ctx context.Context, t Target) error {
	return c.call(ctx, t, "beat", nil, nil)
}

// IdleBeat asks whether the executor is idle for a job (no run of it going
// on or queued); a CallError means busy.
func (c *Client) IdleBeat(ctx context.Context, t Target, jobID int64) error {
	return c.call(ctx, t, "idleBeat", IdleBeatParam{JobID: jobID}, nil)
}

// Run starts (or, with SERIAL_EXECUTION, queues) a run on the executor: a
// call of its run endpoint, trigger from 3.5 on. A refusal is a *CallError
// (Busy when a task of the job id is running), an unreadable answer wraps
// ErrUnreadableAnswer. An executor that answers that it has no such
// endpoint (HTTP 404, or "uri-mapping(/run) not found") gets the call once
// more under the other generation's name; the Client then remembers the
// generation of that address.
func (c *Client) Run(ctx context.Context, t Target, p TriggerParam) error {
	t.Generation = c.generation(t)
	err := c.call(ctx, t, runOp(t.Generation), p, nil)
	if !noEndpoint(err) {
		return err
	}
	other := Gen35
	if t.Generation == Gen35 {
		other = GenClassic
	}
	t2 := t
	t2.Generation = other
	if err2 := c.call(ctx, t2, runOp(other), p, nil); !noEndpoint(err2) {
		c.mu.Lock()
		c.learned[t.Address] = other
		c.mu.Unlock()
		return err2
	}
	return err
}

// generation returns the generation to speak to t: the one learned from a
// run call (Run), else t's.
func (c *Client) generation(t Target) Generation {
	c.mu.Lock()
	defer c.mu.Unlock()
	if g, ok := c.learned[t.Address]; ok {
		return g
	}
	return t.Generation
}

// noEndpoint reports an answer saying the executor has no endpoint of the
// name called.
func noEndpoint(err error) bool {
	var ce *CallError
	var se *statusError
	return (errors.As(err, &ce) && noEndpointRE.MatchString(ce.Msg)) || (errors.As(err, &se) && se.Status == http.StatusNotFound)
}

// statusError is an answer with an HTTP status other than 2xx.
type statusError struct {
	URL    string
	Status int
	Body   string
}

func (e *statusError) Error() string {
	return fmt.Sprintf("call %s: HTTP status %d: %s", e.URL, e.Status, e.Body)
}

// Kill stops the run of the job id on the executor and drops its queued
// runs (jobID is the per-slot id, SlotJobID).
func (c *Client) Kill(ctx context.Context, t Target, jobID int64) error {
	return c.call(ctx, t, "kill", KillParam{JobID: jobID}, nil)
}

// Log reads the log of a run from line from (1-based).
func (c *Client) Log(ctx context.Context, t Target, p LogParam) (LogResult, error) {
	var out LogResult
	err := c.call(ctx, t, "log", p, &out)
	return out, err
}

func (c *Client) call(ctx context.Context, t Target, op string, in, out any) error {
	url := strings.TrimRight(t.Address, "/") + "/" + op
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
	req.Header.Set(TokenHeader, t.Token)
	if t.App != "" {
		req.Header.Set(AppNameHeader, t.App) // required from 3.5 on, ignored before
	}
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
		return &statusError{URL: url, Status: res.StatusCode, Body: strings.TrimSpace(string(data[:min(len(data), 200)]))}
	}
	rt, err := parseAnswer(data)
	if err != nil {
		return fmt.Errorf("%s answered %.200q: %w", url, data, err)
	}
	if rt.Code != CodeSuccess {
		return &CallError{URL: url, Code: rt.Code, Msg: rt.Message()}
	}
	if payload := rt.payload(); out != nil && len(payload) > 0 {
		if err := json.Unmarshal(payload, out); err != nil {
			return fmt.Errorf("content of %s: %w", url, err)
		}
	}
	return nil
}
