package alarm_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/alarm"
)

// receiver is a local webhook endpoint that records requests.
type receiver struct {
	srv  *httptest.Server
	reqs chan request
}

type request struct {
	header http.Header
	query  url.Values
	body   []byte
}

func newReceiver(t *testing.T, answer func(w http.ResponseWriter)) *receiver {
	rc := &receiver{reqs: make(chan request, 100)}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.reqs <- request{header: r.Header.Clone(), query: r.URL.Query(), body: body}
		answer(w)
	}))
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *receiver) next(t *testing.T) request {
	t.Helper()
	select {
	case r := <-rc.reqs:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("no request reached the receiver within 10s")
		return request{}
	}
}

func answerJSON(s string) func(w http.ResponseWriter) {
	return func(w http.ResponseWriter) { _, _ = io.WriteString(w, s) }
}

var msg = alarm.Message{Title: "shardjob [critical] run_failed on job 7", Text: "job billing/settle failed\n\nalarm #1", Severity: "critical", Count: 1, JobID: 7,
	Alarms: []alarm.Item{{ID: 1, Kind: "run_failed", Severity: "critical", JobID: 7, Message: "job billing/settle failed"}}}

func TestWebhookIsSignedAndVerifiable(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, answerJSON("ok"))
	secret := "0123456789abcdef0123"
	ch, err := alarm.NewWebhook(rc.srv.URL+"/hook", secret, 0)
	require.NoError(t, err)
	require.NoError(t, ch.Send(context.Background(), msg))
	r := rc.next(t)

	require.NoError(t, alarm.VerifyWebhook([]byte(secret), r.header, r.body, time.Now(), 5*time.Minute))
	// The documented recipe, by hand: HMAC-SHA256(secret, timestamp "." body).
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(r.header.Get("X-Shardjob-Timestamp") + "." + string(r.body)))
	require.Equal(t, "v1="+string(hexOf(mac.Sum(nil))), r.header.Get("X-Shardjob-Signature"))

	var body alarm.WebhookBody
	require.NoError(t, json.Unmarshal(r.body, &body))
	require.Equal(t, "shardjob", body.Source)
	require.Equal(t, msg.Title, body.Title)
	require.Equal(t, int64(7), body.JobID)
	require.Len(t, body.Alarms, 1)

	require.ErrorIs(t, alarm.VerifyWebhook([]byte("another-secret-0123"), r.header, r.body, time.Now(), 5*time.Minute), alarm.ErrBadSignature)
	require.ErrorIs(t, alarm.VerifyWebhook([]byte(secret), r.header, append(r.body, ' '), time.Now(), 5*time.Minute), alarm.ErrBadSignature)
	require.ErrorIs(t, alarm.VerifyWebhook([]byte(secret), r.header, r.body, time.Now().Add(time.Hour), 5*time.Minute), alarm.ErrStale)

	_, err = alarm.NewWebhook(rc.srv.URL, "short", 0)
	require.ErrorContains(t, err, "at least 16")
}

func hexOf(b []byte) []byte {
	const digits = "0123456789abcdef"
	out := make([]byte, 0, 2*len(b))
	for _, c := range b {
		out = append(out, digits[c>>4], digits[c&15])
	}
	return out
}

func TestSlackFormat(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, answerJSON("ok"))
	ch, err := alarm.NewSlack(rc.srv.URL+"/services/T000/B000/XXXX", 0)
	require.NoError(t, err)
	require.NoError(t, ch.Send(context.Background(), msg))
	var body map[string]any
	require.NoError(t, json.Unmarshal(rc.next(t).body, &body))
	require.Equal(t, map[string]any{"text": "*" + msg.Title + "*\n" + msg.Text}, body)
}

func TestDingTalkFormatAndSigning(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, answerJSON(`{"errcode":0,"errmsg":"ok"}`))
	secret := "SECdingtalk-test-secret"
	ch, err := alarm.NewDingTalk(rc.srv.URL+"/robot/send?access_token=abc", secret, 0)
	require.NoError(t, err)
	require.NoError(t, ch.Send(context.Background(), msg))
	r := rc.next(t)
	require.Equal(t, "abc", r.query.Get("access_token"))
	ts := r.query.Get("timestamp")
	ms, err := strconv.ParseInt(ts, 10, 64)
	require.NoError(t, err)
	require.WithinDuration(t, time.Now(), time.UnixMilli(ms), time.Minute)
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(ts + "\n" + secret))
	require.Equal(t, base64.StdEncoding.EncodeToString(mac.Sum(nil)), r.query.Get("sign"))
	var body struct {
		MsgType string `json:"msgtype"`
		Text    struct{ Content string }
	}
	require.NoError(t, json.Unmarshal(r.body, &body))
	require.Equal(t, "text", body.MsgType)
	require.Equal(t, msg.Title+"\n"+msg.Text, body.Text.Content)

	// An answer with a non-zero errcode is a failed delivery.
	bad := newReceiver(t, answerJSON(`{"errcode":310000,"errmsg":"sign not match"}`))
	ch, err = alarm.NewDingTalk(bad.srv.URL+"/robot/send?access_token=abc", "", 0)
	require.NoError(t, err)
	require.ErrorContains(t, ch.Send(context.Background(), msg), "errcode 310000")
	require.Empty(t, bad.next(t).query.Get("sign"), "no secret: unsigned")
}

func TestFeishuFormatAndSigning(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, answerJSON(`{"code":0,"msg":"success","data":{}}`))
	secret := "feishu-test-secret"
	ch, err := alarm.NewFeishu(rc.srv.URL+"/open-apis/bot/v2/hook/xyz", secret, 0)
	require.NoError(t, err)
	require.NoError(t, ch.Send(context.Background(), msg))
	var body struct {
		Timestamp string `json:"timestamp"`
		Sign      string `json:"sign"`
		MsgType   string `json:"msg_type"`
		Content   struct{ Text string }
	}
	require.NoError(t, json.Unmarshal(rc.next(t).body, &body))
	require.Equal(t, "text", body.MsgType)
	require.Equal(t, msg.Title+"\n"+msg.Text, body.Content.Text)
	mac := hmac.New(sha256.New, []byte(body.Timestamp+"\n"+secret))
	require.Equal(t, base64.StdEncoding.EncodeToString(mac.Sum(nil)), body.Sign)

	bad := newReceiver(t, answerJSON(`{"code":19021,"msg":"sign match fail or timestamp is not within one hour from current time"}`))
	ch, err = alarm.NewFeishu(bad.srv.URL, "", 0)
	require.NoError(t, err)
	require.ErrorContains(t, ch.Send(context.Background(), msg), "code 19021")
}

func TestHTTPChannelsDoNotFollowRedirectsAndReportStatus(t *testing.T) {
	t.Parallel()
	target := newReceiver(t, answerJSON("ok"))
	redirect := newReceiver(t, func(w http.ResponseWriter) {
		w.Header().Set("Location", target.srv.URL)
		w.WriteHeader(http.StatusFound)
	})
	ch, err := alarm.NewSlack(redirect.srv.URL+"/services/T/B/secret-token", 0)
	require.NoError(t, err)
	err = ch.Send(context.Background(), msg)
	require.ErrorContains(t, err, "redirects are not followed")
	require.NotContains(t, err.Error(), "secret-token", "the URL's secret part is not in errors")
	redirect.next(t)
	select {
	case <-target.reqs:
		t.Fatal("redirect was followed")
	default:
	}

	failing := newReceiver(t, func(w http.ResponseWriter) { http.Error(w, "no_service", http.StatusNotFound) })
	ch, err = alarm.NewSlack(failing.srv.URL, 0)
	require.NoError(t, err)
	require.ErrorContains(t, ch.Send(context.Background(), msg), "404 Not Found: no_service")

	// A receiver slower than the timeout fails the delivery.
	release := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-release }))
	t.Cleanup(slow.Close)
	t.Cleanup(func() { close(release) })
	ch, err = alarm.NewSlack(slow.URL, 50*time.Millisecond)
	require.NoError(t, err)
	require.Error(t, ch.Send(context.Background(), msg))
}

// TestChatMarkupInAlarmsNotifiesNoOne: a slot's error is a handler's words
// and reaches alarm texts as they are; Slack's and Feishu's mention markup
// in them (<!channel>, <@U…>, <at user_id="all">) arrives as text that
// mentions no one, and the words stay readable.
func TestChatMarkupInAlarmsNotifiesNoOne(t *testing.T) {
	t.Parallel()
	m := alarm.Message{Title: "run 7 of billing/settle failed <!here>",
		Text: `slot 3: upstream said <!channel> & <@U024BE7LH> <at user_id="all">everyone</at> a > b`}

	rc := newReceiver(t, answerJSON("ok"))
	slack, err := alarm.NewSlack(rc.srv.URL, 0)
	require.NoError(t, err)
	require.NoError(t, slack.Send(context.Background(), m))
	var sb alarm.SlackBody
	require.NoError(t, json.Unmarshal(rc.next(t).body, &sb))
	require.Equal(t, "*run 7 of billing/settle failed &lt;!here&gt;*\n"+
		`slot 3: upstream said &lt;!channel&gt; &amp; &lt;@U024BE7LH&gt; &lt;at user_id="all"&gt;everyone&lt;/at&gt; a &gt; b`, sb.Text)

	fc := newReceiver(t, answerJSON(`{"code":0,"msg":"success","data":{}}`))
	feishu, err := alarm.NewFeishu(fc.srv.URL, "", 0)
	require.NoError(t, err)
	require.NoError(t, feishu.Send(context.Background(), m))
	var fb alarm.FeishuBody
	require.NoError(t, json.Unmarshal(fc.next(t).body, &fb))
	require.NotContains(t, fb.Content.Text, "<", "no tag Feishu could read")
	require.Equal(t, "run 7 of billing/settle failed ＜!here>\n"+
		`slot 3: upstream said ＜!channel> & ＜@U024BE7LH> ＜at user_id="all">everyone＜/at> a > b`, fb.Content.Text)
}
