package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
)

// APIError is an answer of the admin with a status other than 2xx.
type APIError struct {
	Method, Path string
	Status       int
	Msg          string            // the admin's "error"
	Fields       map[string]string // per-field problems, when the admin named them
}

func (e *APIError) Error() string {
	msg := e.Msg
	if msg == "" {
		msg = http.StatusText(e.Status)
	}
	s := fmt.Sprintf("%s %s: %d %s", e.Method, e.Path, e.Status, msg)
	if len(e.Fields) > 0 && !strings.Contains(msg, ": ") {
		keys := make([]string, 0, len(e.Fields))
		for k := range e.Fields {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			s += "\n  " + k + ": " + e.Fields[k]
		}
	}
	return s
}

// Client talks to the admin's API (/api/v1) with a bearer token. It is the
// one Go client of the API: the CLI's commands, and the tests that call a
// running admin, go through it.
type Client struct {
	Base  string // e.g. http://127.0.0.1:8080
	Token string // the bearer token; none is sent when empty
	HTTP  *http.Client
}

// maxAnswer is the most of an answer's body the client reads.
const maxAnswer = 64 << 20

// Answer is an answer of the admin, read whole (its body is closed).
type Answer struct {
	Status int // e.g. 200
	Header http.Header
	Body   []byte
}

// Cookies returns the cookies the answer sets (its Set-Cookie lines that
// parse).
func (a *Answer) Cookies() []*http.Cookie {
	var out []*http.Cookie
	for _, line := range a.Header.Values("Set-Cookie") {
		if c, err := http.ParseSetCookie(line); err == nil {
			out = append(out, c)
		}
	}
	return out
}

// Do sends a JSON request and decodes a 2xx answer into out (when not nil).
// Any other status is an *APIError.
func (c *Client) Do(ctx context.Context, method, path string, in, out any) error {
	a, err := c.send(ctx, method, path, in)
	if err != nil {
		return err
	}
	if a.Status/100 != 2 {
		return apiError(method, path, a.Status, a.Body)
	}
	if out != nil {
		if err := json.Unmarshal(a.Body, out); err != nil {
			return fmt.Errorf("%s %s: unexpected answer (%w): %.200s", method, path, err, a.Body)
		}
	}
	return nil
}

// Call sends a JSON request (in, when not nil) and returns the answer's
// status, whatever it is: unlike Do, an answer other than 2xx is not an
// error. A non-empty answer is decoded into out (when not nil) whatever its
// status, so out can hold the admin's error body.
func (c *Client) Call(ctx context.Context, method, path string, in, out any) (int, error) {
	a, err := c.send(ctx, method, path, in)
	if err != nil {
		return 0, err
	}
	if out != nil && len(a.Body) > 0 {
		if err := json.Unmarshal(a.Body, out); err != nil {
			return a.Status, fmt.Errorf("%s %s: unexpected answer (%d, %w): %.200s", method, path, a.Status, err, a.Body)
		}
	}
	return a.Status, nil
}

// Login opens a session as user and keeps its bearer token in c.Token.
func (c *Client) Login(ctx context.Context, user, password string) error {
	var out struct {
		Token string `json:"token"`
	}
	if err := c.Do(ctx, http.MethodPost, "/api/v1/login", map[string]string{"username": user, "password": password}, &out); err != nil {
		return err
	}
	c.Token = out.Token
	return nil
}

// send marshals in (when not nil) and sends it as JSON.
func (c *Client) send(ctx context.Context, method, path string, in any) (*Answer, error) {
	var body io.Reader
	var header http.Header
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return nil, err
		}
		body = bytes.NewReader(b)
		header = http.Header{"Content-Type": {"application/json"}}
	}
	return c.Send(ctx, method, path, body, header)
}

// Send sends one request with body as it is (nil: none) and returns the
// answer, whatever its status, with its body read (up to 64 MiB). The request carries Accept: application/json and the bearer token
// (when c.Token is set), then the fields of header, which win over these.
// Callers that need what Do hides use it: a body that is not JSON or not
// valid, a Content-Type, a CSRF header or cookies (with a cookie jar in
// c.HTTP), the status and headers of an answer.
func (c *Client) Send(ctx context.Context, method, path string, body io.Reader, header http.Header) (*Answer, error) {
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(c.Base, "/")+path, body)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	req.Header.Set("Accept", "application/json")
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	for k, vs := range header {
		req.Header.Del(k)
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	res, err := hc.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("cannot reach the admin at %s: %w", c.Base, err)
	}
	defer res.Body.Close()
	data, err := io.ReadAll(io.LimitReader(res.Body, maxAnswer))
	if err != nil {
		return nil, fmt.Errorf("%s %s: read answer: %w", method, path, err)
	}
	return &Answer{Status: res.StatusCode, Header: res.Header, Body: data}, nil
}

// apiError is the *APIError of an answer with status and body data.
func apiError(method, path string, status int, data []byte) *APIError {
	ae := &APIError{Method: method, Path: path, Status: status}
	var eb struct {
		Error  string            `json:"error"`
		Fields map[string]string `json:"fields"`
	}
	if json.Unmarshal(data, &eb) == nil {
		ae.Msg, ae.Fields = eb.Error, eb.Fields
	} else {
		ae.Msg = strings.TrimSpace(string(data))
		if len(ae.Msg) > 200 {
			ae.Msg = ae.Msg[:200] + "…"
		}
	}
	return ae
}
