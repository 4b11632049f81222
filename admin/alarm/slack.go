package alarm

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// Slack posts to a Slack incoming webhook ({"text": ...}); the URL is the
// secret. Services that accept the same format (Mattermost, Rocket.Chat
// incoming webhooks) work too.
type Slack struct{ p *httpPoster }

// NewSlack returns a Slack-style channel.
func NewSlack(url string, timeout time.Duration) (*Slack, error) {
	p, err := newHTTPPoster(url, timeout)
	if err != nil {
		return nil, err
	}
	return &Slack{p: p}, nil
}

// SlackBody is the JSON posted to a Slack incoming webhook.
type SlackBody struct {
	Text string `json:"text"`
}

// Send implements Channel.
func (s *Slack) Send(ctx context.Context, m Message) error {
	body, err := json.Marshal(SlackBody{Text: "*" + m.Title + "*\n" + m.Text})
	if err != nil {
		return fmt.Errorf("encode slack body: %w", err)
	}
	_, err = s.p.post(ctx, "", body, nil)
	return err
}
