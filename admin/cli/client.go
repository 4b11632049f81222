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

// Client talks to the admin's API with a bearer token.
type Client struct {
	Base  string // e.g. http://127.0.0.1:8080
	Token string
	HTTP  *http.Client
}

// Do sends a JSON request and decodes a 2xx answer into out (when not nil).
// Any other status is an *APIError.
func (c *Client) Do(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(c.Base, "/")+path, body)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Authorization", "Bearer "+c.Token)
	res, err := c.HTTP.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return fmt.Errorf("cannot reach the admin at %s: %w", c.Base, err)
	}
	defer res.Body.Close()
	data, err := io.ReadAll(io.LimitReader(res.Body, 64<<20))
	if err != nil {
		return fmt.Errorf("%s %s: read answer: %w", method, path, err)
	}
	if res.StatusCode/100 != 2 {
		ae := &APIError{Method: method, Path: path, Status: res.StatusCode}
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
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			return fmt.Errorf("%s %s: unexpected answer (%w): %.200s", method, path, err, data)
		}
	}
	return nil
}
