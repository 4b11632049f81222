package api

import (
	"errors"
	"net/http"
	"slices"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/store"
)

// Alarm groups (docs/alarms.md "Groups"): GET /api/v1/alarms lists groups,
// GET /api/v1/alarm-groups/{id}/alarms their members, and
// POST /api/v1/alarms/bulk acknowledges or resolves many alarms at once.

const (
	// alarmGroupsPage is the default (and maxAlarmGroupsPage the largest)
	// number of groups per page of GET /api/v1/alarms.
	alarmGroupsPage    = 50
	maxAlarmGroupsPage = 200
	// maxBulkIDs caps the ids (and group ids) of one bulk request; more is
	// "all matching the filter".
	maxBulkIDs = 10000
	// maxCountedAlarms bounds the count of the alarms a filter matches
	// (matching_alarms): a list answers in bounded time however many alarms
	// are kept.
	maxCountedAlarms = 100000
)

func alarmGroupView(g store.AlarmGroup) apitypes.AlarmGroupView {
	v := apitypes.AlarmGroupView{ID: g.ID, Count: g.Count, Open: g.Open, Unacked: g.Unacked, FirstAt: msTime(g.FirstAt),
		LastAt: msTime(g.LastAt), Severity: g.Severity, Kinds: make([]apitypes.AlarmKindCount, 0, len(g.Kinds)), Latest: alarmView(g.Latest)}
	for _, k := range g.Kinds {
		v.Kinds = append(v.Kinds, apitypes.AlarmKindCount{Kind: k.Kind, N: k.N})
	}
	return v
}

// checkAlarmFilter adds the field problems of f (under prefix) to fields.
func checkAlarmFilter(f apitypes.AlarmFilterBody, prefix string, fields map[string]msg.Msg) {
	if f.Severity != "" && !slices.Contains([]string{"critical", "warning", "info"}, f.Severity) {
		fields[prefix+"severity"] = msg.New(msg.AlarmsSeverityInvalid, "value", strconv.Quote(f.Severity))
	}
	if f.JobID < 0 {
		fields[prefix+"job_id"] = msg.New(msg.AlarmsIDInvalid, "value", f.JobID)
	}
}

// storeAlarmFilter is f for a reader limited to apps (nil: none).
func storeAlarmFilter(f apitypes.AlarmFilterBody, apps []string) store.AlarmFilter {
	return store.AlarmFilter{Apps: apps, Open: f.Open, Severity: f.Severity, Kind: f.Kind, App: f.App, JobID: f.JobID}
}

// alarmFilterQuery reads the filter of GET /api/v1/alarms from the query
// (open=1, severity, kind, app, job_id); false after a 400.
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
	checkAlarmFilter(f, "", fields)
	if len(fields) > 0 {
		c.AbortWithStatusJSON(http.StatusBadRequest, errorBody{Error: "invalid alarm filter", Fields: fields})
		return f, false
	}
	return f, true
}

// listAlarms lists the groups of alarms the user may see, newest first, that
// have a member matching the filter: a user limited to apps sees those of
// its apps only (of their jobs, runs and executors), not the platform's; the
// filter is in the query, so that a page is full whatever the other apps
// raise. before (a group id) pages; limit is 50 by default, at most 200.
func (s *Server) listAlarms(c *gin.Context) {
	f, ok := alarmFilterQuery(c)
	if !ok {
		return
	}
	before, _ := strconv.ParseInt(c.Query("before"), 10, 64)
	limit, _ := strconv.Atoi(c.Query("limit"))
	if limit <= 0 || limit > maxAlarmGroupsPage {
		limit = alarmGroupsPage
	}
	ctx := c.Request.Context()
	sf := storeAlarmFilter(f, currentUser(c).AppList())
	groups, err := s.st.AlarmGroups(ctx, sf, before, limit+1)
	if err != nil {
		s.internal(c, err)
		return
	}
	more := len(groups) > limit
	groups = groups[:min(len(groups), limit)]
	out := make([]apitypes.AlarmGroupView, 0, len(groups))
	for _, g := range groups {
		out = append(out, alarmGroupView(g))
	}
	matching, err := s.st.CountAlarms(ctx, sf, maxCountedAlarms)
	if err != nil {
		s.internal(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"groups": out, "more": more, "matching_alarms": matching, "matching_capped": matching >= maxCountedAlarms})
}

// alarmGroupAlarms lists the members of a group newest first (keyset: before
// an alarm id; limit 200 by default, at most 1000) with the group and its
// count. A group of another app (or of the platform, for a user limited to
// apps) is 404.
func (s *Server) alarmGroupAlarms(c *gin.Context) {
	id, ok := idParam(c)
	if !ok {
		return
	}
	ctx := c.Request.Context()
	g, err := s.st.AlarmGroupByID(ctx, id)
	u := currentUser(c)
	if err == nil && u.AppList() != nil && (g.Latest.App == "" || !u.AppAllowed(g.Latest.App)) {
		err = store.ErrNotFound
	}
	if errors.Is(err, store.ErrNotFound) {
		fail(c, http.StatusNotFound, "alarm group "+c.Param("id")+" does not exist (or is not of your apps)")
		return
	}
	if err != nil {
		s.internal(c, err)
		return
	}
	before, _ := strconv.ParseInt(c.Query("before"), 10, 64)
	limit, _ := strconv.Atoi(c.Query("limit"))
	if limit <= 0 || limit > 1000 {
		limit = 200
	}
	alarms, err := s.st.AlarmsOfGroup(ctx, id, before, limit)
	if err != nil {
		s.internal(c, err)
		return
	}
	out := make([]apitypes.AlarmView, 0, len(alarms))
	for _, a := range alarms {
		out = append(out, alarmView(a))
	}
	more := len(alarms) == limit
	c.JSON(http.StatusOK, gin.H{"group": alarmGroupView(g), "alarms": out, "total": g.Count, "more": more})
}

// bulkAlarms acknowledges or resolves the selected alarms the user may see,
// in one statement; audited once (alarm.bulk_ack, alarm.bulk_resolve) with
// the count. Alarms done already, and those of other apps, are left as they
// are: changed says how many changed.
func (s *Server) bulkAlarms(c *gin.Context) {
	var req apitypes.AlarmBulkRequest
	if !decode(c, &req) {
		return
	}
	fields := map[string]msg.Msg{}
	if req.Action != store.AlarmActionAck && req.Action != store.AlarmActionResolve {
		fields["action"] = msg.New(msg.AlarmsActionInvalid, "value", strconv.Quote(req.Action))
	}
	selected := len(req.IDs) > 0 || len(req.GroupIDs) > 0
	switch {
	case selected && req.AllMatching:
		fields["all_matching"] = msg.New(msg.AlarmsSelectionBoth)
	case !selected && !req.AllMatching:
		fields["ids"] = msg.New(msg.AlarmsSelectionNeeded)
	}
	for name, ids := range map[string][]int64{"ids": req.IDs, "group_ids": req.GroupIDs} {
		if len(ids) > maxBulkIDs {
			fields[name] = msg.New(msg.AlarmsTooMany, "max", maxBulkIDs)
			continue
		}
		for i, id := range ids {
			if id <= 0 {
				fields[name+"["+strconv.Itoa(i)+"]"] = msg.New(msg.AlarmsIDInvalid, "value", id)
				break
			}
		}
	}
	checkAlarmFilter(req.Filter, "filter.", fields)
	if len(fields) > 0 {
		c.AbortWithStatusJSON(http.StatusBadRequest, errorBody{Error: "invalid bulk alarm request", Fields: fields})
		return
	}
	u := currentUser(c)
	f := storeAlarmFilter(req.Filter, u.AppList())
	if selected {
		f.IDs, f.GroupIDs = req.IDs, req.GroupIDs
	}
	n, err := s.st.ChangeAlarms(c.Request.Context(), req.Action, f, u.Username)
	if err != nil {
		s.internal(c, err)
		return
	}
	app := req.Filter.App
	if apps := u.AppList(); app == "" && len(apps) == 1 {
		app = apps[0]
	}
	s.audit(c, app, "alarm.bulk_"+req.Action, "alarms", map[string]any{"count": n, "ids": len(req.IDs),
		"group_ids": len(req.GroupIDs), "all_matching": req.AllMatching, "filter": req.Filter})
	c.JSON(http.StatusOK, gin.H{"action": req.Action, "changed": n})
}
