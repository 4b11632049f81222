package alarm

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Feishu posts a text message to a Feishu / Lark custom bot
// (https://open.feishu.cn/open-apis/bot/v2/hook/...). With a secret (the
// bot's signature verification setting) the body carries "timestamp" (Unix
// seconds) and "sign" = base64(HMAC-SHA256(key: timestamp+"\n"+secret,
// message: empty)).
type Feishu struct {
	p      *httpPoster
	secret string
	now    func() time.Time
}

// NewFeishu returns a Feishu/Lark bot channel; secret may be empty.
func NewFeishu(url, secret string, timeout time.Duration) (*Feishu, error) {
	p, err := newHTTPPoster(url, timeout)
	if err != nil {
		return nil, err
	}
	return &Feishu{p: p, secret: secret, now: time.Now}, nil
}

// FeishuBody is the JSON posted to a Feishu bot.
type FeishuBody struct {
	Timestamp string `json:"timestamp,omitempty"`
	Sign      string `json:"sign,omitempty"`
	MsgType   string `json:"msg_type"` // "text"
	Content   struct {
		Text string `json:"text"`
	} `json:"content"`
}

// FeishuSign returns the sign field for timestamp (Unix seconds).
func FeishuSign(secret, timestamp string) string {
	mac := hmac.New(sha256.New, []byte(timestamp+"\n"+secret))
	return base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// feishuDefuse keeps a text message's words from being read as Feishu's
// markup: its text type knows no escape, so each "<" becomes the
// full-width "＜" (U+FF1C), and a slot's error that says
// `<at user_id="all">` is shown, it notifies no one.
var feishuDefuse = strings.NewReplacer("<", "\uff1c")

// Send implements Channel.
func (f *Feishu) Send(ctx context.Context, m Message) error {
	var b FeishuBody
	b.MsgType = "text"
	b.Content.Text = feishuDefuse.Replace(m.Title + "\n" + m.Text)
	if f.secret != "" {
		b.Timestamp = strconv.FormatInt(f.now().Unix(), 10)
		b.Sign = FeishuSign(f.secret, b.Timestamp)
	}
	body, err := json.Marshal(b)
	if err != nil {
		return fmt.Errorf("encode feishu body: %w", err)
	}
	data, err := f.p.post(ctx, "", body, nil)
	if err != nil {
		return err
	}
	var res struct {
		Code       *int   `json:"code"`
		Msg        string `json:"msg"`
		StatusCode *int   `json:"StatusCode"` // older API versions
	}
	if err := json.Unmarshal(data, &res); err != nil {
		return fmt.Errorf("feishu: unexpected answer: %s", snippet(data))
	}
	switch {
	case res.Code != nil && *res.Code != 0:
		return fmt.Errorf("feishu refused the message: code %d: %s", *res.Code, res.Msg)
	case res.Code == nil && res.StatusCode != nil && *res.StatusCode != 0:
		return fmt.Errorf("feishu refused the message: StatusCode %d", *res.StatusCode)
	case res.Code == nil && res.StatusCode == nil:
		return fmt.Errorf("feishu: unexpected answer: %s", snippet(data))
	}
	return nil
}
