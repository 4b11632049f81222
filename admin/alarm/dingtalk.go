package alarm

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// DingTalk posts a text message to a DingTalk group robot
// (https://oapi.dingtalk.com/robot/send?access_token=...). With a secret
// (the robot's "加签" security setting) each request carries
// &timestamp=<ms>&sign=<base64(HMAC-SHA256(secret, timestamp+"\n"+secret))>.
// A robot secured by keyword works with the keyword "shardjob": every
// message title starts with it.
type DingTalk struct {
	p      *httpPoster
	secret string
	now    func() time.Time
}

// NewDingTalk returns a DingTalk robot channel; secret may be empty.
func NewDingTalk(url, secret string, timeout time.Duration) (*DingTalk, error) {
	p, err := newHTTPPoster(url, timeout)
	if err != nil {
		return nil, err
	}
	return &DingTalk{p: p, secret: secret, now: time.Now}, nil
}

// DingTalkBody is the JSON posted to a DingTalk robot.
type DingTalkBody struct {
	MsgType string `json:"msgtype"` // "text"
	Text    struct {
		Content string `json:"content"`
	} `json:"text"`
}

// DingTalkSign returns the sign parameter for timestamp (Unix ms).
func DingTalkSign(secret, timestamp string) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(timestamp + "\n" + secret))
	return base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// Send implements Channel.
func (d *DingTalk) Send(ctx context.Context, m Message) error {
	var b DingTalkBody
	b.MsgType = "text"
	b.Text.Content = m.Title + "\n" + m.Text
	body, err := json.Marshal(b)
	if err != nil {
		return fmt.Errorf("encode dingtalk body: %w", err)
	}
	target := d.p.url
	if d.secret != "" {
		ts := strconv.FormatInt(d.now().UnixMilli(), 10)
		sep := "?"
		if strings.Contains(target, "?") {
			sep = "&"
		}
		target += sep + "timestamp=" + ts + "&sign=" + url.QueryEscape(DingTalkSign(d.secret, ts))
	}
	data, err := d.p.post(ctx, target, body, nil)
	if err != nil {
		return err
	}
	var res struct {
		ErrCode *int   `json:"errcode"`
		ErrMsg  string `json:"errmsg"`
	}
	if err := json.Unmarshal(data, &res); err != nil || res.ErrCode == nil {
		return fmt.Errorf("dingtalk: unexpected answer: %s", snippet(data))
	}
	if *res.ErrCode != 0 {
		return fmt.Errorf("dingtalk refused the message: errcode %d: %s", *res.ErrCode, res.ErrMsg)
	}
	return nil
}
