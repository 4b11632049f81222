package store_test

import (
	"context"
	"database/sql"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/store"
)

func nid(v int64) sql.NullInt64 { return sql.NullInt64{Int64: v, Valid: true} }

// raiseMany raises n alarms of kind in one transaction (as a settled run
// does), each with run (0: none) and job (0: none).
func raiseMany(t *testing.T, s *store.Store, n int, kind, sev, app string, job, run int64, key string) {
	t.Helper()
	alarms := make([]store.Alarm, n)
	for i := range alarms {
		alarms[i] = store.Alarm{Kind: kind, Severity: sev, App: app, DedupKey: key + ":" + strconv.Itoa(i), Message: kind}
		if job != 0 {
			alarms[i].JobID = nid(job)
		}
		if run != 0 {
			alarms[i].RunID = nid(run)
		}
	}
	require.NoError(t, s.Tx(context.Background(), func(tx *store.Tx) error { return tx.RaiseAlarms(context.Background(), alarms...) }))
}

func TestAlarmGroupsCountsAndDrillDown(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		raiseMany(t, s, 300, store.AlarmSlotDead, "critical", "billing", 7, 70, "dead70")
		raiseMany(t, s, 1, store.AlarmRunFailed, "critical", "billing", 7, 70, "failed70")
		// Raised again (another replica): dedup keeps one, the group has no more.
		raiseMany(t, s, 1, store.AlarmRunFailed, "critical", "billing", 7, 70, "failed70")
		raiseMany(t, s, 2, store.AlarmMissedFire, "critical", "billing", 7, 0, "missed7")
		raiseMany(t, s, 1, store.AlarmArchiveBehind, "warning", "billing", 7, 0, "archive7")
		raiseMany(t, s, 3, store.AlarmExecutorLost, "warning", "ops", 0, 0, "lost")
		ok, err := s.RaiseAlarm(ctx, store.Alarm{Kind: store.AlarmLeaderChange, Severity: "info", DedupKey: "leader_change:9", Message: "leads"})
		require.NoError(t, err)
		require.True(t, ok)

		groups, err := s.AlarmGroups(ctx, store.AlarmFilter{}, 0, 50)
		require.NoError(t, err)
		require.Len(t, groups, 4, "the run; job 7's other alarms within the hour; the executors of ops; the leader change")
		byKind := map[string]store.AlarmGroup{}
		for _, g := range groups {
			byKind[g.Latest.Kind] = g
		}
		run := byKind[store.AlarmRunFailed]
		require.Equal(t, 301, run.Count)
		require.Equal(t, 301, run.Open)
		require.Equal(t, 301, run.Unacked)
		require.Equal(t, []store.AlarmCount{{Kind: store.AlarmSlotDead, N: 300}, {Kind: store.AlarmRunFailed, N: 1}}, run.Kinds)
		job := byKind[store.AlarmArchiveBehind]
		require.Equal(t, 3, job.Count)
		require.Equal(t, "critical", job.Severity, "the worst of its members")
		require.Equal(t, 3, byKind[store.AlarmExecutorLost].Count)

		// Info alarms need nobody: resolved when raised, with the reason.
		leader := byKind[store.AlarmLeaderChange]
		require.Equal(t, "info", leader.Severity)
		require.Zero(t, leader.Open)
		require.Equal(t, store.ResolvedByAdmin, leader.Latest.ResolvedBy)
		require.Equal(t, msg.New(msg.AlarmResolvedInfo), leader.Latest.ResolvedMsg)
		open, err := s.AlarmGroups(ctx, store.AlarmFilter{Open: true}, 0, 50)
		require.NoError(t, err)
		require.Len(t, open, 3, "no open info alarm")

		// Filters: by severity and kind, app scope, keyset paging.
		warn, err := s.AlarmGroups(ctx, store.AlarmFilter{Severity: "warning"}, 0, 50)
		require.NoError(t, err)
		require.Len(t, warn, 2, "job 7's group has a warning member; the executors' group")
		scoped, err := s.AlarmGroups(ctx, store.AlarmFilter{Apps: []string{"ops"}}, 0, 50)
		require.NoError(t, err)
		require.Len(t, scoped, 1)
		require.Equal(t, "ops", scoped[0].Latest.App)
		none, err := s.AlarmGroups(ctx, store.AlarmFilter{Apps: []string{}}, 0, 50)
		require.NoError(t, err)
		require.Empty(t, none)
		page1, err := s.AlarmGroups(ctx, store.AlarmFilter{}, 0, 2)
		require.NoError(t, err)
		page2, err := s.AlarmGroups(ctx, store.AlarmFilter{}, page1[1].ID, 50)
		require.NoError(t, err)
		require.Len(t, page2, 2)
		require.Less(t, page2[0].ID, page1[1].ID)

		// Drill-down, keyset paged.
		members, err := s.AlarmsOfGroup(ctx, run.ID, 0, 200)
		require.NoError(t, err)
		require.Len(t, members, 200)
		require.Equal(t, store.AlarmRunFailed, members[0].Kind, "newest first")
		rest, err := s.AlarmsOfGroup(ctx, run.ID, members[199].ID, 200)
		require.NoError(t, err)
		require.Len(t, rest, 101)
		for _, a := range append(members, rest...) {
			require.Equal(t, run.ID, a.GroupID.Int64)
		}
		_, err = s.AlarmGroup(ctx, 1<<40)
		require.ErrorIs(t, err, store.ErrNotFound)

		// A new run is a new group.
		raiseMany(t, s, 1, store.AlarmRunFailed, "critical", "billing", 7, 71, "failed71")
		all, err := s.AlarmGroups(ctx, store.AlarmFilter{}, 0, 50)
		require.NoError(t, err)
		require.Len(t, all, 5)
	})
}

func TestBulkAcknowledgeAndResolve(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		raiseMany(t, s, 1000, store.AlarmSlotDead, "critical", "billing", 7, 70, "dead70")
		raiseMany(t, s, 5, store.AlarmSlotDead, "critical", "billing", 8, 80, "dead80")
		raiseMany(t, s, 4, store.AlarmExecutorLost, "warning", "ops", 0, 0, "lost")
		groups, err := s.AlarmGroups(ctx, store.AlarmFilter{}, 0, 50)
		require.NoError(t, err)
		require.Len(t, groups, 3)
		run80 := groups[1]
		require.Equal(t, 5, run80.Count)

		// By selection: a few ids, acknowledged; again: nothing changes.
		members, err := s.AlarmsOfGroup(ctx, run80.ID, 0, 10)
		require.NoError(t, err)
		ids := []int64{members[0].ID, members[1].ID}
		n, err := s.ChangeAlarms(ctx, store.AlarmActionAck, store.AlarmFilter{IDs: ids}, "ann")
		require.NoError(t, err)
		require.Equal(t, int64(2), n)
		n, err = s.ChangeAlarms(ctx, store.AlarmActionAck, store.AlarmFilter{IDs: ids}, "ann")
		require.NoError(t, err)
		require.Zero(t, n, "acknowledged already")

		// An app scope leaves other apps' alarms alone.
		n, err = s.ChangeAlarms(ctx, store.AlarmActionResolve, store.AlarmFilter{Apps: []string{"ops"}, Severity: "critical"}, "ann")
		require.NoError(t, err)
		require.Zero(t, n)

		// All matching the filter (critical): 1,005 alarms, one statement.
		matching, err := s.CountAlarms(ctx, store.AlarmFilter{Open: true, Severity: "critical"}, 1_000_000)
		require.NoError(t, err)
		require.Equal(t, int64(1005), matching)
		capped, err := s.CountAlarms(ctx, store.AlarmFilter{Open: true, Severity: "critical"}, 100)
		require.NoError(t, err)
		require.Equal(t, int64(100), capped, "a bounded count")
		n, err = s.ChangeAlarms(ctx, store.AlarmActionResolve, store.AlarmFilter{Open: true, Severity: "critical"}, "bob")
		require.NoError(t, err)
		require.Equal(t, int64(1005), n)
		var resolved, ackedByAnn int
		require.NoError(t, s.DB().Get(&resolved, `SELECT COUNT(*) FROM alarm_event WHERE resolved_by = 'bob' AND resolved_at IS NOT NULL AND acked_at IS NOT NULL`))
		require.Equal(t, 1005, resolved)
		require.NoError(t, s.DB().Get(&ackedByAnn, `SELECT COUNT(*) FROM alarm_event WHERE acked_by = 'ann'`))
		require.Equal(t, 2, ackedByAnn, "who acknowledged first stays")
		open, err := s.AlarmGroups(ctx, store.AlarmFilter{Open: true}, 0, 50)
		require.NoError(t, err)
		require.Len(t, open, 1)
		require.Equal(t, store.AlarmExecutorLost, open[0].Latest.Kind)

		// By group.
		n, err = s.ChangeAlarms(ctx, store.AlarmActionResolve, store.AlarmFilter{GroupIDs: []int64{open[0].ID}}, "bob")
		require.NoError(t, err)
		require.Equal(t, int64(4), n)
		_, err = s.ChangeAlarms(ctx, "close", store.AlarmFilter{}, "bob")
		require.ErrorContains(t, err, "want ack or resolve")
	})
}

// An executor_lost alarm resolves itself when its executor heartbeats
// again, with the reason; not before.
func TestExecutorLostResolvesWhenItHeartbeatsAgain(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		info := store.ExecutorInfo{InstanceID: "e1", App: "billing", Address: "http://127.0.0.1:1", Capacity: 1, Handlers: []string{"h"}}
		ex, err := s.Heartbeat(ctx, info)
		require.NoError(t, err)
		_, err = s.DB().Exec(`UPDATE executor SET last_heartbeat = last_heartbeat - 60000 WHERE id = ?`, ex.ID)
		require.NoError(t, err)
		lost, err := s.MarkLostExecutors(ctx, 30000)
		require.NoError(t, err)
		require.Equal(t, int64(1), lost)
		n, err := s.ResolveExecutorsBack(ctx)
		require.NoError(t, err)
		require.Zero(t, n, "still silent")

		// Pin the alarm's time before the heartbeat (the clock's millisecond
		// may not have moved).
		_, err = s.DB().Exec(`UPDATE alarm_event SET at = at - 1000 WHERE kind = 'executor_lost'`)
		require.NoError(t, err)
		_, err = s.Heartbeat(ctx, info)
		require.NoError(t, err)
		n, err = s.ResolveExecutorsBack(ctx)
		require.NoError(t, err)
		require.Equal(t, int64(1), n)
		groups, err := s.AlarmGroups(ctx, store.AlarmFilter{}, 0, 10)
		require.NoError(t, err)
		require.Len(t, groups, 1)
		a := groups[0].Latest
		require.Equal(t, store.AlarmExecutorLost, a.Kind)
		require.Equal(t, ex.ID, a.ExecutorID.Int64)
		require.Equal(t, store.ResolvedByAdmin, a.ResolvedBy)
		require.Equal(t, msg.New(msg.AlarmResolvedExecutor), a.ResolvedMsg)
	})
}
