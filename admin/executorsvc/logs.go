package executorsvc

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"

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
	res, err := s.st.AppendRunLogs(ctx, ex.ID, lines, drops, s.cfg.RunLogs)
	if err != nil {
		return protocol.LogsResponse{}, err
	}
	if len(res.Rejected) > 0 {
		s.log.Debug("log lines of tokens the executor does not hold ignored", "instance", req.InstanceID, "tokens", res.Rejected)
	}
	return protocol.LogsResponse{Stored: res.Stored, Dropped: res.Dropped, RejectedTokens: res.Rejected}, nil
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
