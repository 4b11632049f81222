package alarm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"time"
)

// File is the channels file (--alarm-channels), JSON:
//
//	{
//	  "window": "1m",
//	  "max_attempts": 8,
//	  "channels": [
//	    {"name": "ops-hook", "type": "webhook", "url": "https://hooks.example.com/shardjob",
//	     "secret": "env:SHARDJOB_OPS_HOOK_SECRET", "default": true},
//	    {"name": "ops-slack", "type": "slack", "url": "env:SHARDJOB_SLACK_URL"},
//	    {"name": "ops-ding", "type": "dingtalk", "url": "env:SHARDJOB_DINGTALK_URL", "secret": "env:SHARDJOB_DINGTALK_SECRET"},
//	    {"name": "ops-feishu", "type": "feishu", "url": "env:SHARDJOB_FEISHU_URL", "secret": "env:SHARDJOB_FEISHU_SECRET"},
//	    {"name": "mail", "type": "smtp", "addr": "smtp.example.com:587", "username": "shardjob",
//	     "password": "env:SHARDJOB_SMTP_PASSWORD", "from": "shardjob@example.com",
//	     "to": ["oncall@example.com"], "require_tls": true}
//	  ]
//	}
//
// Any string value of the form "env:NAME" is read from the environment
// variable NAME (which must be set and not empty), so that secrets need not
// be written in the file. There are no default secrets.
type File struct {
	// Window is the throttling window (Go duration). Default 1m.
	Window string `json:"window"`
	// MaxAttempts per message before giving up. Default 8.
	MaxAttempts int `json:"max_attempts"`
	// Channels are the configured channels.
	Channels []ChannelSpec `json:"channels"`
}

// ChannelSpec is one channel of the channels file.
type ChannelSpec struct {
	Name    string `json:"name"`
	Type    string `json:"type"`
	Default bool   `json:"default"`
	// Timeout of one delivery (Go duration). Default 10s (HTTP), 30s (SMTP).
	Timeout string `json:"timeout"`
	// HTTP channels.
	URL    string `json:"url"`
	Secret string `json:"secret"`
	// SMTP.
	Addr       string   `json:"addr"`
	Username   string   `json:"username"`
	Password   string   `json:"password"`
	From       string   `json:"from"`
	To         []string `json:"to"`
	RequireTLS bool     `json:"require_tls"`
}

var channelName = regexp.MustCompile(`^[a-z0-9][a-z0-9_.-]{0,63}$`)

// LoadFile reads a channels file and applies it to cfg (Channels, Window,
// MaxAttempts).
func LoadFile(path string, cfg *Config) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("alarm channels file: %w", err)
	}
	if err := ParseFile(data, os.LookupEnv, cfg); err != nil {
		return fmt.Errorf("alarm channels file %s: %w", path, err)
	}
	return nil
}

// ParseFile parses a channels file; lookup resolves "env:NAME" values.
func ParseFile(data []byte, lookup func(string) (string, bool), cfg *Config) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var f File
	if err := dec.Decode(&f); err != nil {
		return fmt.Errorf("invalid JSON: %w", err)
	}
	if f.Window != "" {
		d, err := time.ParseDuration(f.Window)
		if err != nil || d <= 0 {
			return fmt.Errorf("window %q: must be a positive duration like 1m", f.Window)
		}
		cfg.Window = d
	}
	if f.MaxAttempts < 0 {
		return fmt.Errorf("max_attempts %d: must be positive", f.MaxAttempts)
	}
	cfg.MaxAttempts = f.MaxAttempts
	seen := map[string]bool{}
	var errs []error
	for i, spec := range f.Channels {
		ep, err := spec.build(lookup)
		if err == nil && seen[spec.Name] {
			err = errors.New("name is used twice")
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("channels[%d] (%s): %w", i, spec.Name, err))
			continue
		}
		seen[spec.Name] = true
		cfg.Channels = append(cfg.Channels, ep)
	}
	return errors.Join(errs...)
}

func (c ChannelSpec) build(lookup func(string) (string, bool)) (Endpoint, error) {
	ep := Endpoint{Name: c.Name, Type: c.Type, Default: c.Default}
	if !channelName.MatchString(c.Name) {
		return ep, errors.New("name: 1-64 characters a-z, 0-9, '_', '.', '-', starting with a letter or digit")
	}
	var timeout time.Duration
	if c.Timeout != "" {
		d, err := time.ParseDuration(c.Timeout)
		if err != nil || d <= 0 {
			return ep, fmt.Errorf("timeout %q: must be a positive duration like 10s", c.Timeout)
		}
		timeout = d
	}
	var err error
	env := func(field, v string) string {
		name, ok := strings.CutPrefix(v, "env:")
		if !ok || err != nil {
			return v
		}
		val, set := lookup(name)
		if !set || val == "" {
			err = fmt.Errorf("%s: environment variable %s is not set", field, name)
		}
		return val
	}
	url, secret := env("url", c.URL), env("secret", c.Secret)
	password := env("password", c.Password)
	if err != nil {
		return ep, err
	}
	http := c.Type != TypeSMTP
	if http && (c.Addr != "" || c.Username != "" || c.Password != "" || c.From != "" || len(c.To) > 0 || c.RequireTLS) {
		return ep, fmt.Errorf("addr, username, password, from, to and require_tls apply to smtp channels only, not %s", c.Type)
	}
	if !http && (c.URL != "" || c.Secret != "") {
		return ep, errors.New("url and secret apply to HTTP channels, not smtp")
	}
	switch c.Type {
	case TypeWebhook:
		ep.Channel, err = NewWebhook(url, secret, timeout)
	case TypeSlack:
		if secret != "" {
			return ep, errors.New("secret: a Slack incoming webhook has none (its URL is the secret)")
		}
		ep.Channel, err = NewSlack(url, timeout)
	case TypeDingTalk:
		ep.Channel, err = NewDingTalk(url, secret, timeout)
	case TypeFeishu:
		ep.Channel, err = NewFeishu(url, secret, timeout)
	case TypeSMTP:
		if c.Default && len(c.To) == 0 {
			return ep, errors.New("to: a default email channel needs recipients")
		}
		if c.Username == "" && password != "" {
			return ep, errors.New("password without username")
		}
		ep.Channel, err = NewSMTP(SMTPConfig{Addr: c.Addr, Username: c.Username, Password: password, From: c.From, To: c.To,
			RequireTLS: c.RequireTLS, Timeout: timeout})
	default:
		return ep, fmt.Errorf("type %q: must be webhook, slack, dingtalk, feishu or smtp", c.Type)
	}
	return ep, err
}
