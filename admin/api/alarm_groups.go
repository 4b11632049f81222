package api

import (
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/ops"
)

// Alarm groups (docs/alarms.md "Groups"; admin/ops alarm_groups.go): GET
// /api/v1/alarms lists groups, GET /api/v1/alarm-groups/{id}/alarms their
// members, and POST /api/v1/alarms/bulk acknowledges or resolves many
// alarms at once.

// alarmFilterQuery reads the filter of GET /api/v1/alarms from the query
// (open=1, severity, kind, app, job_id); false after a 400 naming every
// field in error.
func alarmFilterQuery(c *gin.Context) (apitypes.AlarmFilterBody, bool) {
	f := apitypes.AlarmFilterBody{Open: c.Query("open") == "1" || c.Query("open") == "true", Severity: c.Query("severity"),
		Kind: c.Query("kind"), App: c.Query("app")}
	fields := map[string]msg.Msg{}
	if v := c.Query("job_id"); v != "" {
		id, err := strconv.ParseInt(v, 10, 64)
		if err != nil || id <= 0 {
			fields["job_id"] = msg.New(msg.AlarmsIDInvalid, "value", strconv.Quote(v))
		}
		f.JobID = id
	}
	if len(fields) > 0 {
		ops.CheckAlarmFilter(f, "", fields)
		c.AbortWithStatusJSON(http.StatusBadRequest, errorBody{Error: "invalid alarm filter", Fields: fields})
		return f, false
	}
	return f, true
}

func (s *Server) listAlarms(c *gin.Context) {
	f, ok := alarmFilterQuery(c)
	if !ok {
		return
	}
	before, _ := strconv.ParseInt(c.Query("before"), 10, 64)
	limit, _ := strconv.Atoi(c.Query("limit"))
	groups, err := s.ops.AlarmGroups(c.Request.Context(), actor(c), apitypes.AlarmGroupQuery{Filter: f, Before: before, Limit: limit})
	if err != nil {
		s.opsFailed(c, err)
		return
	}
	c.JSON(http.StatusOK, groups)
}

func (s *Server) alarmGroupAlarms(c *gin.Context) {
	id, ok := idParam(c)
	if !ok {
		return
	}
	before, _ := strconv.ParseInt(c.Query("before"), 10, 64)
	limit, _ := strconv.Atoi(c.Query("limit"))
	out, err := s.ops.GroupAlarms(c.Request.Context(), actor(c), id, before, limit)
	if err != nil {
		s.opsFailed(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}

func (s *Server) bulkAlarms(c *gin.Context) {
	var req apitypes.AlarmBulkRequest
	if !decode(c, &req) {
		return
	}
	out, err := s.ops.BulkAlarms(c.Request.Context(), actor(c), req)
	if err != nil {
		s.opsFailed(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}
