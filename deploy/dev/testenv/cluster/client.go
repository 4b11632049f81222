package cluster

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"
)

// Client is a minimal client of the admin's HTTP API (/api/v1), with the
// bearer token of a console session once logged in.
type Client struct {
	Base  string
	Token string
	HTTP  *http.Client
}

// NewClient returns a client for the admin at base.
func NewClient(base string) *Client {
	return &Client{Base: base, HTTP: &http.Client{Timeout: 10 * time.Second}}
}

// Login obtains a bearer token.
func (c *Client) Login(user, password string) error {
	var out struct {
		Token string `json:"token"`
	}
	code, err := c.Do(http.MethodPost, "/api/v1/login", map[string]string{"username": user, "password": password}, &out)
	if err != nil {
		return err
	}
	if code != http.StatusOK {
		return fmt.Errorf("login: status %d", code)
	}
	c.Token = out.Token
	return nil
}

// Do sends a JSON request and decodes the JSON reply into out (if not nil).
// It returns the status code; non-2xx is not an error.
func (c *Client) Do(method, path string, in, out any) (int, error) {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return 0, err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, c.Base+path, body)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	res, err := c.HTTP.Do(req)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	if err != nil {
		return res.StatusCode, err
	}
	if out != nil && len(data) > 0 {
		if err := json.Unmarshal(data, out); err != nil {
			return res.StatusCode, fmt.Errorf("decode %s %s (%d): %w: %s", method, path, res.StatusCode, err, data)
		}
	}
	return res.StatusCode, nil
}

// Get sends GET path and decodes the reply into out; a status other than
// 200 is an error.
func (c *Client) Get(path string, out any) error {
	code, err := c.Do(http.MethodGet, path, nil, out)
	if err != nil {
		return err
	}
	if code != http.StatusOK {
		return fmt.Errorf("GET %s: status %d", path, code)
	}
	return nil
}
