package alarm

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
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

// slackEscape escapes the three characters Slack reads as markup in a
// message's text (&, <, >): a slot's error that says "<!channel>" or
// "<@U123>" is shown, it notifies no one.
var slackEscape = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

// Send implements Channel.
func (s *Slack) Send(ctx context.Context, m Message) error {
	body, err := json.Marshal(SlackBody{Text: "*" + slackEscape.Replace(m.Title) + "*\n" + slackEscape.Replace(m.Text)})
	if err != nil {
		return fmt.Errorf("encode slack body: %w", err)
	}
	_, err = s.p.post(ctx, "", body, nil)
	return err
}
