package api

import (
	"encoding/json"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/sdk/protocol"
)

// executorLogs stores a batch of log lines shipped by an executor (signed,
// PathLogs; see executorsvc.Service.Logs). The executor forgets the batch
// on any 2xx.
func (s *Server) executorLogs(c *gin.Context) {
	var req protocol.LogsRequest
	if !decodeSigned(c, &req) {
		return
	}
	resp, err := s.proto.Logs(c.Request.Context(), req)
	if err != nil {
		s.protoFail(c, err)
		return
	}
	c.JSON(http.StatusOK, resp)
}

// LogLineView is a stored log line as GET /runs/:id/logs returns it.
type LogLineView struct {
	Seq     int64           `json:"seq"`
	Slot    int             `json:"slot"`
	Token   int64           `json:"token"`
	Attempt int             `json:"attempt"`
	At      time.Time       `json:"at"`    // the executor's clock
	Level   string          `json:"level"` // DEBUG, INFO, WARN, ERROR (slog names, e.g. INFO+2 in between)
	Message string          `json:"message"`
	Attrs   json.RawMessage `json:"attrs,omitempty"`
}

// RunLogsView is the answer of GET /runs/:id/logs.
type RunLogsView struct {
	RunID     int64         `json:"run_id"`
	RunStatus string        `json:"run_status"`
	Lines     []LogLineView `json:"lines"`
	// NextAfterSeq is the after_seq of the next request: every matching
	// line up to it has been returned.
	NextAfterSeq int64 `json:"next_after_seq"`
	// HasMore: the page is full; ask again at once for the rest.
	HasMore     bool  `json:"has_more"`
	StoredLines int64 `json:"stored_lines"` // lines of the run stored, all slots
	// Dropped counts the run's lines that were not stored: by the executors
	// (their buffer was full while no admin answered) and by the admin
	// (over the run's cap).
	Dropped struct {
		Executor int64 `json:"executor"`
		Cap      int64 `json:"cap"`
	} `json:"dropped"`
}

var logLevels = map[string]int{"debug": int(slog.LevelDebug), "info": int(slog.LevelInfo), "warn": int(slog.LevelWarn), "error": int(slog.LevelError)}

// runLogs pages through the log lines of a run by seq (keyset):
// ?after_seq= (default 0), ?slot= (default all), ?level= minimum level
// (debug, info, warn, error; default all), ?limit= 1-1000 (default 200).
func (s *Server) runLogs(c *gin.Context) {
	id, ok := idParam(c)
	if !ok {
		return
	}
	f := store.RunLogFilter{Slot: -1, MinLevel: math.MinInt32, Limit: 200}
	var err error
	if v := c.Query("slot"); v != "" {
		if f.Slot, err = strconv.Atoi(v); err != nil || f.Slot < 0 || f.Slot > 1023 {
			fail(c, http.StatusBadRequest, "slot must be a slot number 0-1023")
			return
		}
	}
	if v := c.Query("after_seq"); v != "" {
		if f.AfterSeq, err = strconv.ParseInt(v, 10, 64); err != nil || f.AfterSeq < 0 {
			fail(c, http.StatusBadRequest, "after_seq must be a non-negative integer (the next_after_seq of the previous page)")
			return
		}
	}
	if v := c.Query("limit"); v != "" {
		if f.Limit, err = strconv.Atoi(v); err != nil || f.Limit < 1 || f.Limit > 1000 {
			fail(c, http.StatusBadRequest, "limit must be 1-1000")
			return
		}
	}
	if v := c.Query("level"); v != "" {
		lv, ok := logLevels[strings.ToLower(v)]
		if !ok {
			fail(c, http.StatusBadRequest, "level must be one of debug, info, warn, error")
			return
		}
		f.MinLevel = lv
	}
	r, ok := s.loadRun(c, id)
	if !ok {
		return
	}
	lines, st, err := s.st.RunLogs(c.Request.Context(), id, f)
	if err != nil {
		s.internal(c, err)
		return
	}
	out := RunLogsView{RunID: id, RunStatus: r.Status, Lines: make([]LogLineView, 0, len(lines)), StoredLines: st.StoredLines, NextAfterSeq: f.AfterSeq}
	out.Dropped.Executor, out.Dropped.Cap = st.DroppedExecutor, st.DroppedCap
	for _, l := range lines {
		v := LogLineView{Seq: l.Seq, Slot: l.Slot, Token: l.Token, Attempt: l.Attempt, At: msTime(l.At),
			Level: slog.Level(l.Level).String(), Message: l.Message}
		if l.Attrs != "" {
			v.Attrs = json.RawMessage(l.Attrs)
		}
		out.Lines = append(out.Lines, v)
		out.NextAfterSeq = l.Seq
	}
	out.HasMore = len(lines) == f.Limit
	if !out.HasMore {
		// Every matching line below the state's next seq was returned: skip
		// the non-matching ones next time.
		out.NextAfterSeq = max(out.NextAfterSeq, st.NextSeq-1)
	}
	c.JSON(http.StatusOK, out)
}
