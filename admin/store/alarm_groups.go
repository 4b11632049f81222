package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/jmoiron/sqlx"
	"github.com/shardjob/shardjob/admin/msg"
)

// Alarm groups (docs/alarms.md). Every alarm belongs to one group, decided
// when it is raised: the alarms of one run (a failed 1024-slot run: its
// slot_dead alarms and its run_failed, one group), else those of one job
// within an hour, else those of one kind and app within an hour. A group is
// listed as one row with its count, acknowledged and resolved as one, and
// notified once (admin/alarm: the alarms that follow an open alarm of their
// group send nothing). The group row only names the group; what it holds
// (counts, first and last seen, the worst severity) is read from its
// members, so raising an alarm never updates a shared row.

// AlarmGroupWindow is how long alarms of one job (or of one kind and app)
// without a run join the same group: a group of such a scope takes alarms
// for an hour (database clock) after its first one; the next alarm of the
// scope then starts a new group.
const AlarmGroupWindow = 3600_000 // ms

// groupScope names what the alarms of a group share: the run, else the job,
// else the kind and app; windowed for all but a run.
func groupScope(a Alarm) (scope string, windowed bool) {
	switch {
	case a.RunID.Valid:
		return "run:" + strconv.FormatInt(a.RunID.Int64, 10), false
	case a.JobID.Valid:
		return "job:" + strconv.FormatInt(a.JobID.Int64, 10), true
	default:
		return truncate("kind:"+a.Kind+":"+a.App, 160), true
	}
}

// alarmGroups returns the group id of each alarm, creating the groups that
// do not exist yet. The group of a run has the run's scope as its key, so
// replicas raising alarms of one run at once find one group; an existing
// group is found without a lock.
func (s *Store) alarmGroups(ctx context.Context, tx *sqlx.Tx, alarms []Alarm) ([]int64, error) {
	scopes := make([]string, len(alarms))
	apps := map[string]string{}
	var runs, windowed []string
	for i, a := range alarms {
		scope, w := groupScope(a)
		scopes[i] = scope
		if _, seen := apps[scope]; !seen {
			if w {
				windowed = append(windowed, scope)
			} else {
				runs = append(runs, scope)
			}
		}
		apps[scope] = a.App
	}
	ids := map[string]int64{}
	if err := s.groupsByKey(ctx, tx, runs, ids); err != nil {
		return nil, err
	}
	var missing []alarmEventGroupInsertParams
	slices.Sort(runs) // concurrent raisers lock in one order
	for _, k := range runs {
		if _, ok := ids[k]; !ok {
			missing = append(missing, alarmEventGroupInsertParams{GroupKey: k, Scope: k, App: apps[k]})
		}
	}
	if len(missing) > 0 {
		if _, err := s.q.AlarmEventGroupInsert(ctx, tx, missing); err != nil {
			return nil, fmt.Errorf("create %d alarm group(s): %w", len(missing), err)
		}
		if err := s.groupsByKey(ctx, tx, runs, ids); err != nil {
			return nil, err
		}
	}
	if len(windowed) > 0 {
		nowMS, err := s.dbNow(ctx, tx)
		if err != nil {
			return nil, fmt.Errorf("alarm groups: database clock: %w", err)
		}
		slices.Sort(windowed)
		for _, scope := range windowed {
			id, err := s.q.AlarmEventGroupOfScope(ctx, tx, alarmEventGroupOfScopeParams{Scope: scope, CreatedAt: nowMS - AlarmGroupWindow})
			if err == nil {
				ids[scope] = id
				continue
			}
			if !errors.Is(err, sql.ErrNoRows) {
				return nil, fmt.Errorf("alarm group of %s: %w", scope, err)
			}
			key := scope + ":" + strconv.FormatInt(nowMS, 10)
			if _, err := s.q.AlarmEventGroupInsert(ctx, tx, []alarmEventGroupInsertParams{{GroupKey: key, Scope: scope, App: apps[scope]}}); err != nil {
				return nil, fmt.Errorf("create alarm group %s: %w", key, err)
			}
			found := map[string]int64{}
			if err := s.groupsByKey(ctx, tx, []string{key}, found); err != nil {
				return nil, err
			}
			ids[scope] = found[key]
		}
	}
	out := make([]int64, len(alarms))
	for i, scope := range scopes {
		out[i] = ids[scope]
	}
	return out, nil
}

// groupsByKey adds to ids the groups of keys that exist.
func (s *Store) groupsByKey(ctx context.Context, tx *sqlx.Tx, keys []string, ids map[string]int64) error {
	if len(keys) == 0 {
		return nil
	}
	rows, err := s.q.AlarmEventGroupIDs(ctx, tx, keys)
	if err != nil {
		return fmt.Errorf("alarm groups: %w", err)
	}
	for _, r := range rows {
		ids[r.GroupKey] = r.ID
	}
	return nil
}

// AlarmFilter selects alarms: by reader (Apps), state, severity, kind, app
// and job, and by selection (IDs, GroupIDs). The zero value selects every
// alarm.
type AlarmFilter struct {
	// Apps limits to the alarms of these apps (nil: no limit; the
	// platform's alarms only without a limit): the reader's app scope.
	Apps []string
	// Open: only alarms nobody resolved.
	Open     bool
	Severity string
	Kind     string
	App      string
	JobID    int64
	// IDs and GroupIDs: only these alarms, or the members of these groups
	// (either; both empty: no selection).
	IDs      []int64
	GroupIDs []int64
}

// where adds the filter's conditions to w (columns of alarm_event, no
// alias). It reports false when the filter can match nothing (an empty app
// scope).
func (f AlarmFilter) where(w *filters) bool {
	if f.Apps != nil {
		if len(f.Apps) == 0 {
			return false
		}
		w.add("app <> ''")
		w.in("app", f.Apps)
	}
	if f.Open {
		w.add("resolved_at IS NULL")
	}
	if f.Severity != "" {
		w.add("severity = ?", f.Severity)
	}
	if f.Kind != "" {
		w.add("kind = ?", f.Kind)
	}
	if f.App != "" {
		w.add("app = ?", f.App)
	}
	if f.JobID > 0 {
		w.add("job_id = ?", f.JobID)
	}
	var sel []string
	var args []any
	for _, s := range []struct {
		col string
		ids []int64
	}{{"id", f.IDs}, {"group_id", f.GroupIDs}} {
		if len(s.ids) > 0 {
			sel = append(sel, s.col+" IN (?"+strings.Repeat(", ?", len(s.ids)-1)+")")
			for _, id := range s.ids {
				args = append(args, id)
			}
		}
	}
	if len(sel) > 0 {
		w.add("("+strings.Join(sel, " OR ")+")", args...)
	}
	return true
}

// AlarmGroup is one group of alarms as a reader sees it.
type AlarmGroup struct {
	ID       int64
	Count    int // members
	Open     int // members nobody resolved
	Unacked  int // members nobody acknowledged or resolved
	FirstAt  int64
	LastAt   int64
	Severity string       // the worst of its members
	Kinds    []AlarmCount // members per kind, most first
	Latest   Alarm        // its newest member
}

var severityByRank = map[int]string{3: "critical", 2: "warning", 1: "info"}

// AlarmGroups lists up to limit groups newest first, with id < beforeID
// (0: from the newest), that have a member matching f (f's IDs and
// GroupIDs are ignored). Counts are of all members.
func (s *Store) AlarmGroups(ctx context.Context, f AlarmFilter, beforeID int64, limit int) ([]AlarmGroup, error) {
	f.IDs, f.GroupIDs = nil, nil
	var w filters
	if !f.where(&w) {
		return nil, nil
	}
	if beforeID > 0 {
		w.add("group_id < ?", beforeID)
	}
	w.add("group_id IS NOT NULL")
	q, args := w.query(s.q.get(qAlarmEventGroupPage), limit)
	var ids []int64
	if err := s.db.SelectContext(ctx, &ids, q, args...); err != nil {
		return nil, fmt.Errorf("list alarm groups: %w", err)
	}
	return s.alarmGroupsByID(ctx, ids)
}

// AlarmGroup returns one group (ErrNotFound when it has no member).
func (s *Store) AlarmGroup(ctx context.Context, id int64) (AlarmGroup, error) {
	gs, err := s.alarmGroupsByID(ctx, []int64{id})
	if err != nil {
		return AlarmGroup{}, err
	}
	if len(gs) == 0 {
		return AlarmGroup{}, fmt.Errorf("alarm group %d: %w", id, ErrNotFound)
	}
	return gs[0], nil
}

// alarmGroupsByID reads the groups of ids (in that order) from their
// members; a group without members is left out.
func (s *Store) alarmGroupsByID(ctx context.Context, ids []int64) ([]AlarmGroup, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	stats, err := s.q.AlarmEventGroupStats(ctx, s.db, ids)
	if err != nil {
		return nil, fmt.Errorf("alarm group counts: %w", err)
	}
	kinds, err := s.q.AlarmEventGroupKinds(ctx, s.db, ids)
	if err != nil {
		return nil, fmt.Errorf("alarm group kinds: %w", err)
	}
	if len(stats) == 0 {
		return nil, nil
	}
	byID := make(map[int64]*AlarmGroup, len(stats))
	latest := make([]int64, 0, len(stats))
	for _, st := range stats {
		byID[st.GroupID] = &AlarmGroup{ID: st.GroupID, Count: st.N, Open: st.NOpen, Unacked: st.NUnacked, FirstAt: st.FirstAt,
			LastAt: st.LastAt, Severity: severityByRank[st.Worst]}
		latest = append(latest, st.LastID)
	}
	for _, k := range kinds {
		if g := byID[k.GroupID]; g != nil {
			g.Kinds = append(g.Kinds, AlarmCount{Kind: k.Kind, N: k.N})
		}
	}
	members, err := s.q.AlarmListByIDs(ctx, s.db, latest)
	if err != nil {
		return nil, fmt.Errorf("alarm group members: %w", err)
	}
	for _, a := range members {
		if g := byID[a.GroupID.Int64]; g != nil {
			g.Latest = a
		}
	}
	out := make([]AlarmGroup, 0, len(byID))
	for _, id := range ids {
		if g := byID[id]; g != nil {
			out = append(out, *g)
		}
	}
	return out, nil
}

// AlarmsOfGroup lists up to limit members of a group newest first, with
// id < beforeID (0: from the newest).
func (s *Store) AlarmsOfGroup(ctx context.Context, groupID, beforeID int64, limit int) ([]Alarm, error) {
	if beforeID <= 0 {
		beforeID = 1<<63 - 1
	}
	out, err := s.q.AlarmListOfGroup(ctx, s.db, alarmListOfGroupParams{GroupID: groupID, ID: beforeID, Limit: limit})
	if err != nil {
		return nil, fmt.Errorf("alarms of group %d: %w", groupID, err)
	}
	return out, nil
}

// CountAlarms counts the alarms f selects, up to upTo (a bounded scan:
// upTo means "upTo or more").
func (s *Store) CountAlarms(ctx context.Context, f AlarmFilter, upTo int64) (int64, error) {
	var w filters
	if !f.where(&w) {
		return 0, nil
	}
	q, args := w.query(s.q.get(qAlarmCountWhere), upTo)
	var n int64
	if err := s.db.GetContext(ctx, &n, q, args...); err != nil {
		return 0, fmt.Errorf("count alarms: %w", err)
	}
	return n, nil
}

// Bulk actions on alarms.
const (
	AlarmActionAck     = "ack"
	AlarmActionResolve = "resolve"
)

// ChangeAlarms acknowledges (AlarmActionAck: the open, unacknowledged ones)
// or resolves (AlarmActionResolve: the open ones, acknowledging them too)
// every alarm f selects, in by's name, in one statement; it returns how many
// changed. Alarms done already are left as they are.
func (s *Store) ChangeAlarms(ctx context.Context, action string, f AlarmFilter, by string) (int64, error) {
	var w filters
	if !f.where(&w) {
		return 0, nil
	}
	w.add("resolved_at IS NULL")
	q, set := qAlarmBulkResolve, []any{by, by}
	switch action {
	case AlarmActionAck:
		w.add("acked_at IS NULL")
		q, set = qAlarmBulkAck, []any{by}
	case AlarmActionResolve:
	default:
		return 0, fmt.Errorf("alarm action %q: want %s or %s", action, AlarmActionAck, AlarmActionResolve)
	}
	text, args := w.query(s.q.get(q))
	res, err := s.exec(ctx, text, append(set, args...)...)
	if err != nil {
		return 0, fmt.Errorf("%s alarms: %w", action, err)
	}
	n, _ := res.RowsAffected()
	return n, nil
}

// ResolveRunsPlaced resolves the waiting run_unplaceable alarms (warning)
// whose run has been placed since (its slots have attempts), with the
// reason; it returns how many. The critical ones (runs that failed unplaced)
// stay open.
func (s *Store) ResolveRunsPlaced(ctx context.Context) (int64, error) {
	return resolveByAdmin(ctx, "run_unplaceable alarms of runs placed since", func() (int64, error) {
		return s.q.AlarmResolveRunsPlaced(ctx, s.db, msg.New(msg.AlarmResolvedRunPlaced))
	})
}

// ResolveExecutorsBack resolves the executor_lost alarms of executors that
// heartbeat again since, with the reason; it returns how many.
func (s *Store) ResolveExecutorsBack(ctx context.Context) (int64, error) {
	return resolveByAdmin(ctx, "executor_lost alarms of executors back online", func() (int64, error) {
		return s.q.AlarmResolveExecutorsBack(ctx, s.db, msg.New(msg.AlarmResolvedExecutor))
	})
}

// resolveByAdmin runs resolve, an autocommit statement that resolves alarms
// in the admin's name and returns how many, again on a deadlock or
// lock-wait timeout (see retry); what names the alarms for an error.
func resolveByAdmin(ctx context.Context, what string, resolve func() (int64, error)) (int64, error) {
	var n int64
	err := retry(ctx, func() error {
		var err error
		n, err = resolve()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("resolve %s: %w", what, err)
	}
	return n, nil
}
