package api

import (
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"strings"

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
	out, err := s.ops.RunLogs(c.Request.Context(), actor(c), id, f)
	if err != nil {
		s.opsFailed(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}
