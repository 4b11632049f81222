package alarm_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/alarm"
)

func env(vars map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
}

func TestParseFile(t *testing.T) {
	t.Parallel()
	file := `{"window": "5m", "max_attempts": 4, "channels": [
	  {"name": "ops-hook", "type": "webhook", "url": "https://hooks.example.com/x", "secret": "env:HOOK_SECRET", "default": true},
	  {"name": "ops-slack", "type": "slack", "url": "env:SLACK_URL", "timeout": "3s"},
	  {"name": "ding", "type": "dingtalk", "url": "https://oapi.dingtalk.com/robot/send?access_token=t", "secret": "SECx"},
	  {"name": "lark", "type": "feishu", "url": "https://open.feishu.cn/open-apis/bot/v2/hook/x"},
	  {"name": "mail", "type": "smtp", "addr": "smtp.example.com:587", "username": "u", "password": "env:SMTP_PW",
	   "from": "shardjob@example.com", "to": ["oncall@example.com"], "require_tls": true}]}`
	var cfg alarm.Config
	require.NoError(t, alarm.ParseFile([]byte(file), env(map[string]string{
		"HOOK_SECRET": "0123456789abcdef0123", "SLACK_URL": "https://hooks.slack.com/services/T/B/x", "SMTP_PW": "pw"}), &cfg))
	require.Equal(t, 5*time.Minute, cfg.Window)
	require.Equal(t, 4, cfg.MaxAttempts)
	require.Len(t, cfg.Channels, 5)
	require.True(t, cfg.Channels[0].Default)
	require.True(t, cfg.Channels[4].Email())
	require.False(t, cfg.Channels[0].Email())

	bad := []struct{ file, want string }{
		{`{"channels": [{"name": "h", "type": "webhook", "url": "https://x.example.com"}]}`, "secret: at least 16"},
		{`{"channels": [{"name": "h", "type": "webhook", "url": "https://x.example.com", "secret": "env:NOPE"}]}`, "NOPE is not set"},
		{`{"channels": [{"name": "h", "type": "webhook", "url": "ftp://x", "secret": "0123456789abcdef0"}]}`, "http(s) URL"},
		{`{"channels": [{"name": "H H", "type": "slack", "url": "https://x.example.com"}]}`, "name:"},
		{`{"channels": [{"name": "s", "type": "slack", "url": "https://x.example.com"}, {"name": "s", "type": "slack", "url": "https://x.example.com"}]}`, "used twice"},
		{`{"channels": [{"name": "s", "type": "pager", "url": "https://x.example.com"}]}`, `type "pager"`},
		{`{"channels": [{"name": "s", "type": "slack", "url": "https://x.example.com", "to": ["a@example.com"]}]}`, "smtp channels only"},
		{`{"channels": [{"name": "m", "type": "smtp", "addr": "smtp.example.com:25", "from": "a@example.com", "default": true}]}`, "needs recipients"},
		{`{"channels": [{"name": "m", "type": "smtp", "addr": "smtp.example.com", "from": "a@example.com"}]}`, "host:port"},
		{`{"window": "soon", "channels": []}`, "window"},
		{`{"chanels": []}`, "unknown field"},
	}
	for _, b := range bad {
		var cfg alarm.Config
		err := alarm.ParseFile([]byte(b.file), env(nil), &cfg)
		require.ErrorContains(t, err, b.want, b.file)
	}
}
