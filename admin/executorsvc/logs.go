package executorsvc

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/sdk/protocol"
)

// Logs stores a batch of log lines shipped by an executor. Lines of tokens
// the executor did not run are ignored and their tokens listed in the
// response; lines over their run's cap are counted as dropped on the run.
// Messages are made valid UTF-8 and cut, attributes that are not a small
// JSON object dropped, levels clamped. Errors: ErrInvalid (too many lines or
// drop counts), ErrUnknownExecutor, or a database error.
func (s *Service) Logs(ctx context.Context, req protocol.LogsRequest) (protocol.LogsResponse, error) {
	if len(req.Lines) > maxLogLinesPerRequest || len(req.Dropped) > maxLogLinesPerRequest {
		return protocol.LogsResponse{}, invalid("at most " + strconv.Itoa(maxLogLinesPerRequest) + " lines and drop counts per request")
	}
	ex, err := s.knownExecutor(ctx, req.InstanceID)
	if err != nil {
		return protocol.LogsResponse{}, err
	}
	lines := make([]store.LogLine, len(req.Lines))
	for i, l := range req.Lines {
		lines[i] = store.LogLine{Token: l.Token, At: l.AtMS, Level: min(max(l.Level, -maxLogLevel), maxLogLevel),
			Message: cleanText(l.Message, maxLogMessageBytes), Attrs: cleanAttrs(l.Attrs)}
	}
	drops := make([]store.LogDrop, 0, len(req.Dropped))
	for _, d := range req.Dropped {
		if d.Lines > 0 {
			drops = append(drops, store.LogDrop{Token: d.Token, Lines: d.Lines})
		}
	}
	lim := s.cfg.RunLogs
	if lim.AppBytesPerDay, err = s.logQuota(ctx, ex.App); err != nil {
		return protocol.LogsResponse{}, err
	}
	lim.App, lim.Day = ex.App, time.Now().UTC().Format(time.DateOnly)
	res, err := s.st.AppendRunLogs(ctx, ex.ID, lines, drops, lim)
	if err != nil {
		return protocol.LogsResponse{}, err
	}
	if res.OverQuota > 0 {
		s.log.Debug("log lines over the app's daily quota dropped", "app", ex.App, "lines", res.OverQuota, "quota_bytes", lim.AppBytesPerDay)
	}
	if len(res.Rejected) > 0 {
		s.log.Debug("log lines of tokens the executor does not hold ignored", "instance", req.InstanceID, "tokens", res.Rejected)
	}
	return protocol.LogsResponse{Stored: res.Stored, Dropped: res.Dropped, RejectedTokens: res.Rejected}, nil
}

// logQuotaTTL is how long a read app log quota is used before it is read
// again: a quota an admin changes applies within it.
const logQuotaTTL = 10 * time.Second

// logQuota is an app's run-log quota as read at.
type logQuota struct {
	bytes int64
	at    time.Time
}

// logQuota returns app's quota on run-log bytes a day (0: none), read
// again after logQuotaTTL: one query per app every 10 s, not per request.
func (s *Service) logQuota(ctx context.Context, app string) (int64, error) {
	now := time.Now()
	s.quotaMu.Lock()
	q, ok := s.quotas[app]
	s.quotaMu.Unlock()
	if ok && now.Sub(q.at) < logQuotaTTL {
		return q.bytes, nil
	}
	n, err := s.st.AppLogQuota(ctx, app)
	if err != nil {
		return 0, err
	}
	s.quotaMu.Lock()
	defer s.quotaMu.Unlock()
	if s.quotas == nil {
		s.quotas = map[string]logQuota{}
	}
	s.quotas[app] = logQuota{bytes: n, at: now}
	return n, nil
}

// cleanText makes s valid UTF-8 of at most n bytes (cut on a rune
// boundary, marked with "…").
func cleanText(s string, n int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}

// cleanAttrs keeps attrs when it is a JSON object of bounded size.
func cleanAttrs(attrs string) string {
	a := strings.TrimSpace(attrs)
	if a == "" || len(a) > maxLogAttrsBytes || a[0] != '{' || !json.Valid([]byte(a)) {
		return ""
	}
	return strings.ToValidUTF8(a, "\uFFFD")
}
