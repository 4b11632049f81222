package ops

import (
	"context"
	"errors"
	"slices"
	"strconv"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/store"
)

// Alarm groups (docs/alarms.md "Groups").

const (
	// alarmGroupsPage is the default (and maxAlarmGroupsPage the largest)
	// number of groups per page of AlarmGroups.
	alarmGroupsPage    = 50
	maxAlarmGroupsPage = 200
	// groupAlarmsPage is the default (and maxGroupAlarmsPage the largest)
	// number of alarms per page of GroupAlarms.
	groupAlarmsPage    = 200
	maxGroupAlarmsPage = 1000
	// maxBulkIDs caps the ids (and group ids) of one bulk request; more is
	// "all matching the filter".
	maxBulkIDs = 10000
	// maxCountedAlarms bounds the count of the alarms a filter matches
	// (matching_alarms): a list answers in bounded time however many alarms
	// are kept.
	maxCountedAlarms = 100000
)

// AlarmView is alarm a as the API answers it.
func AlarmView(a store.Alarm) apitypes.AlarmView {
	v := apitypes.AlarmView{ID: a.ID, At: msTime(a.At), Kind: a.Kind, Severity: a.Severity, JobName: a.JobName,
		JobID: optID(a.JobID), RunID: optID(a.RunID), Message: a.Message, RaisedBy: a.RaisedBy, App: a.App,
		MessageCode: string(a.Msg.Code), MessageArgs: a.Msg.Args,
		AckedAt: optTime(a.AckedAt), AckedBy: a.AckedBy, ResolvedAt: optTime(a.ResolvedAt), ResolvedBy: a.ResolvedBy,
		GroupID: optID(a.GroupID)}
	if !a.ResolvedMsg.IsZero() {
		v.ResolvedReason, v.ResolvedCode, v.ResolvedArgs = a.ResolvedMsg.String(), string(a.ResolvedMsg.Code), a.ResolvedMsg.Args
	}
	return v
}

func alarmGroupWire(g store.AlarmGroup) apitypes.AlarmGroupView {
	v := apitypes.AlarmGroupView{ID: g.ID, Count: g.Count, Open: g.Open, Unacked: g.Unacked, FirstAt: msTime(g.FirstAt),
		LastAt: msTime(g.LastAt), Severity: g.Severity, Kinds: make([]apitypes.AlarmKindCount, 0, len(g.Kinds)), Latest: AlarmView(g.Latest)}
	for _, k := range g.Kinds {
		v.Kinds = append(v.Kinds, apitypes.AlarmKindCount{Kind: k.Kind, N: k.N})
	}
	return v
}

// CheckAlarmFilter adds the field problems of f (under prefix: "filter."
// in a bulk request) to fields.
func CheckAlarmFilter(f apitypes.AlarmFilterBody, prefix string, fields map[string]msg.Msg) {
	if f.Severity != "" && !slices.Contains([]string{"critical", "warning", "info"}, f.Severity) {
		fields[prefix+"severity"] = msg.New(msg.AlarmsSeverityInvalid, "value", strconv.Quote(f.Severity))
	}
	if f.JobID < 0 {
		fields[prefix+"job_id"] = msg.New(msg.AlarmsIDInvalid, "value", f.JobID)
	}
}

// alarmFilterOf is f for a reader limited to apps (nil: none).
func alarmFilterOf(f apitypes.AlarmFilterBody, apps []string) store.AlarmFilter {
	return store.AlarmFilter{Apps: apps, Open: f.Open, Severity: f.Severity, Kind: f.Kind, App: f.App, JobID: f.JobID}
}

// AlarmGroups lists the groups of alarms the actor may see, newest first,
// that have a member matching the filter: a user limited to apps sees those
// of its apps only (of their jobs, runs and executors), not the
// platform's. before (a group id) pages; limit is 50 by default, at most
// 200.
func (s *Service) AlarmGroups(ctx context.Context, a Actor, q apitypes.AlarmGroupQuery) (apitypes.AlarmGroupList, error) {
	fields := map[string]msg.Msg{}
	CheckAlarmFilter(q.Filter, "", fields)
	if len(fields) > 0 {
		return apitypes.AlarmGroupList{}, refuse(ErrInvalid, "invalid alarm filter", fields)
	}
	limit := q.Limit
	if limit <= 0 || limit > maxAlarmGroupsPage {
		limit = alarmGroupsPage
	}
	sf := alarmFilterOf(q.Filter, a.User.AppList())
	groups, err := s.st.AlarmGroups(ctx, sf, q.Before, limit+1)
	if err != nil {
		return apitypes.AlarmGroupList{}, err
	}
	out := apitypes.AlarmGroupList{More: len(groups) > limit}
	groups = groups[:min(len(groups), limit)]
	out.Groups = make([]apitypes.AlarmGroupView, 0, len(groups))
	for _, g := range groups {
		out.Groups = append(out.Groups, alarmGroupWire(g))
	}
	if out.MatchingAlarms, err = s.st.CountAlarms(ctx, sf, maxCountedAlarms); err != nil {
		return apitypes.AlarmGroupList{}, err
	}
	out.MatchingCapped = out.MatchingAlarms >= maxCountedAlarms
	return out, nil
}

// GroupAlarms lists the members of group id newest first (keyset: before
// an alarm id; limit 200 by default, at most 1000) with the group and its
// count. A group of another app (or of the platform, for a user limited to
// apps) does not exist for the actor.
func (s *Service) GroupAlarms(ctx context.Context, a Actor, id, before int64, limit int) (apitypes.AlarmGroupAlarms, error) {
	g, err := s.st.AlarmGroup(ctx, id)
	if err == nil && a.User.AppList() != nil && (g.Latest.App == "" || !a.User.AppAllowed(g.Latest.App)) {
		err = store.ErrNotFound
	}
	if errors.Is(err, store.ErrNotFound) {
		return apitypes.AlarmGroupAlarms{}, &Error{Kind: ErrNotFound, Object: "alarm group", ID: id,
			Msg: "alarm group " + strconv.FormatInt(id, 10) + " does not exist (or is not of your apps)"}
	}
	if err != nil {
		return apitypes.AlarmGroupAlarms{}, err
	}
	if limit <= 0 || limit > maxGroupAlarmsPage {
		limit = groupAlarmsPage
	}
	alarms, err := s.st.AlarmsOfGroup(ctx, id, before, limit)
	if err != nil {
		return apitypes.AlarmGroupAlarms{}, err
	}
	out := apitypes.AlarmGroupAlarms{Group: alarmGroupWire(g), Alarms: make([]apitypes.AlarmView, 0, len(alarms)), Total: g.Count, More: len(alarms) == limit}
	for _, al := range alarms {
		out.Alarms = append(out.Alarms, AlarmView(al))
	}
	return out, nil
}

// BulkAlarms acknowledges or resolves the selected alarms the actor may
// see, in one statement; audited once (alarm.bulk_ack, alarm.bulk_resolve)
// with the count. Alarms done already, and those of other apps, are left
// as they are: Changed says how many changed.
func (s *Service) BulkAlarms(ctx context.Context, a Actor, req apitypes.AlarmBulkRequest) (apitypes.AlarmBulkResult, error) {
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
	CheckAlarmFilter(req.Filter, "filter.", fields)
	if len(fields) > 0 {
		return apitypes.AlarmBulkResult{}, refuse(ErrInvalid, "invalid bulk alarm request", fields)
	}
	f := alarmFilterOf(req.Filter, a.User.AppList())
	if selected {
		f.IDs, f.GroupIDs = req.IDs, req.GroupIDs
	}
	n, err := s.st.ChangeAlarms(ctx, req.Action, f, a.User.Username)
	if err != nil {
		return apitypes.AlarmBulkResult{}, err
	}
	app := req.Filter.App
	if apps := a.User.AppList(); app == "" && len(apps) == 1 {
		app = apps[0]
	}
	s.audit(ctx, a, app, "alarm.bulk_"+req.Action, "alarms", map[string]any{"count": n, "ids": len(req.IDs),
		"group_ids": len(req.GroupIDs), "all_matching": req.AllMatching, "filter": req.Filter})
	return apitypes.AlarmBulkResult{Action: req.Action, Changed: n}, nil
}
