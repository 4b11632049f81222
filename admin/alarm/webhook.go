package alarm

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Headers of the generic webhook.
const (
	HeaderTimestamp = "X-Shardjob-Timestamp" // Unix seconds
	HeaderSignature = "X-Shardjob-Signature" // "v1=" + hex HMAC-SHA256
)

// MinWebhookSecret is the shortest accepted webhook secret.
const MinWebhookSecret = 16

// Webhook posts the message as JSON (WebhookBody) and signs it:
//
//	X-Shardjob-Timestamp: <unix seconds>
//	X-Shardjob-Signature: v1=<hex(HMAC-SHA256(secret, timestamp + "." + body))>
//
// A receiver recomputes the HMAC over the timestamp header, a dot and the
// raw body, compares in constant time and rejects old timestamps
// (VerifyWebhook does all of it).
type Webhook struct {
	p      *httpPoster
	secret []byte
	now    func() time.Time
}

// WebhookBody is the JSON the generic webhook posts.
type WebhookBody struct {
	Source string    `json:"source"` // "shardjob"
	SentAt time.Time `json:"sent_at"`
	Message
}

// NewWebhook returns a generic webhook channel. secret is required.
func NewWebhook(url, secret string, timeout time.Duration) (*Webhook, error) {
	if len(secret) < MinWebhookSecret {
		return nil, fmt.Errorf("secret: at least %d characters required (generate one with 'openssl rand -hex 32')", MinWebhookSecret)
	}
	p, err := newHTTPPoster(url, timeout)
	if err != nil {
		return nil, err
	}
	return &Webhook{p: p, secret: []byte(secret), now: time.Now}, nil
}

// Send implements Channel.
func (w *Webhook) Send(ctx context.Context, m Message) error {
	now := w.now()
	body, err := json.Marshal(WebhookBody{Source: "shardjob", SentAt: now.UTC(), Message: m})
	if err != nil {
		return fmt.Errorf("encode webhook body: %w", err)
	}
	ts := strconv.FormatInt(now.Unix(), 10)
	h := http.Header{}
	h.Set(HeaderTimestamp, ts)
	h.Set(HeaderSignature, SignWebhook(w.secret, ts, body))
	_, err = w.p.post(ctx, "", body, h)
	return err
}

// SignWebhook returns the signature header value of body sent at timestamp.
func SignWebhook(secret []byte, timestamp string, body []byte) string {
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(timestamp))
	mac.Write([]byte{'.'})
	mac.Write(body)
	return "v1=" + hex.EncodeToString(mac.Sum(nil))
}

// Errors of VerifyWebhook.
var (
	ErrBadSignature = errors.New("webhook signature does not match")
	ErrStale        = errors.New("webhook timestamp outside the accepted window")
)

// VerifyWebhook checks the signature headers of a webhook request against
// its raw body, accepting timestamps within tolerance of now (5 minutes is
// reasonable). Receivers written in Go can call it; others follow the same
// steps (docs/alarms.md).
func VerifyWebhook(secret []byte, h http.Header, body []byte, now time.Time, tolerance time.Duration) error {
	ts := h.Get(HeaderTimestamp)
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return fmt.Errorf("%w: %s header %q is not Unix seconds", ErrBadSignature, HeaderTimestamp, ts)
	}
	if d := now.Sub(time.Unix(sec, 0)); d > tolerance || d < -tolerance {
		return fmt.Errorf("%w: %s off by %s", ErrStale, HeaderTimestamp, d.Round(time.Second))
	}
	want := SignWebhook(secret, ts, body)
	got := strings.TrimSpace(h.Get(HeaderSignature))
	if !hmac.Equal([]byte(got), []byte(want)) {
		return ErrBadSignature
	}
	return nil
}
