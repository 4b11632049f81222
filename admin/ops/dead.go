package ops

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/jobdef"
	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/runstate"
	"github.com/shardjob/shardjob/admin/store"
)

// MaxReplayIDs is the most dead letters one replay takes.
const MaxReplayIDs = 1000

// DeadView is dead letter d as the API returns it.
func DeadView(d store.DeadLetter) apitypes.DeadLetter {
	v := apitypes.DeadLetter{
		ID: d.ID, App: d.App, JobID: d.JobID, JobName: d.JobName, Handler: d.Handler, RunID: d.RunID,
		ScheduledAt: msTime(d.ScheduledAt), Slot: d.Slot, Token: d.Token, Attempt: d.Attempt, Params: d.Params,
		SlotParam: d.SlotParam, Error: d.Error, ErrorCode: string(d.ErrorMsg.Code), ErrorArgs: d.ErrorMsg.Args,
		ErrorClass: d.ErrorClass, Processed: d.Processed, Skipped: d.Skipped, Failed: d.Failed, Uncertain: d.Uncertain,
		DiedAt: msTime(d.DiedAt), ReplayedAt: optTime(d.ReplayedAt), ReplayedBy: d.ReplayedBy, ReplayToken: optID(d.ReplayToken),
		Replays: d.Replays,
	}
	return v
}

// DeadLetters lists the dead letters f selects among those of the apps a
// may see, newest first; with count, how many match (up to the store's
// cap). The next page is asked with the id of the last letter as
// f.BeforeID (NextCursor).
func (s *Service) DeadLetters(ctx context.Context, a Actor, f store.DeadFilter, count bool) (apitypes.DeadList, error) {
	f.Apps = a.User.AppList()
	rows, err := s.st.DeadLetters(ctx, f)
	if err != nil {
		return apitypes.DeadList{}, err
	}
	out := apitypes.DeadList{Dead: make([]apitypes.DeadLetter, 0, len(rows))}
	for _, d := range rows {
		out.Dead = append(out.Dead, DeadView(d))
	}
	if len(rows) > 0 && len(rows) == f.Limit {
		out.NextCursor = strconv.FormatInt(rows[len(rows)-1].ID, 10)
	}
	if count {
		n, exact, err := s.st.CountDeadLetters(ctx, f, store.DefaultListCountCap)
		if err != nil {
			return out, err
		}
		out.Count, out.CountExact = &n, &exact
	}
	return out, nil
}

// ReplayDead runs the slots of dead letters again as new attempts of their
// runs (runstate.Machine.Replay: all or none, set-based), for an operator
// of every app involved and of every app their jobs reach. A letter that
// does not exist or is of an app a may not see is ErrNotFound; one that
// was replayed (without Force), whose run is gone or whose slot runs or
// succeeded since is ErrConflict, each named in Fields (ids[i]). One audit
// entry per app.
func (s *Service) ReplayDead(ctx context.Context, a Actor, req apitypes.ReplayRequest) (apitypes.ReplayAnswer, error) {
	var none apitypes.ReplayAnswer
	if len(req.IDs) == 0 || len(req.IDs) > MaxReplayIDs {
		return none, refuseField(ErrInvalid, "ids", msg.New(msg.DeadIDsRange, "max", MaxReplayIDs, "count", len(req.IDs)))
	}
	index := map[int64]int{} // id → its first place in the request
	for i, id := range req.IDs {
		if id <= 0 {
			return none, refuseField(ErrInvalid, "ids["+strconv.Itoa(i)+"]", msg.New(msg.ListIDInvalid, "value", id))
		}
		if _, ok := index[id]; !ok {
			index[id] = i
		}
	}
	params, err := replayParams(req.Params)
	if err != nil {
		return none, err
	}
	letters, err := s.st.DeadLettersByID(ctx, req.IDs)
	if err != nil {
		return none, err
	}
	found := map[int64]store.DeadLetter{}
	for _, d := range letters {
		if a.User.AppAllowed(d.App) {
			found[d.ID] = d
		}
	}
	var missing []runstate.Refusal
	for id := range index {
		if _, ok := found[id]; !ok {
			missing = append(missing, runstate.Refusal{ID: id, Reason: msg.New(msg.DeadNotFound, "id", id)})
		}
	}
	if len(missing) > 0 {
		return none, replayRefused(ErrNotFound, missing, index)
	}
	reach, err := s.deadReach(ctx, a, letters)
	if err != nil {
		return none, err
	}
	replayed, refused, err := s.runs.Replay(ctx, runstate.Replay{IDs: req.IDs, Params: params, Force: req.Force, By: a.User.Username})
	if errors.Is(err, runstate.ErrReplayRace) {
		return none, refuse(ErrConflict, err.Error()+": nothing was replayed; ask again", nil)
	}
	if err != nil {
		return none, err
	}
	if len(refused) > 0 {
		kind := ErrConflict
		if refused[0].Reason.Code == msg.DeadNotFound {
			kind = ErrNotFound
		}
		return none, replayRefused(kind, refused, index)
	}
	out := apitypes.ReplayAnswer{Replayed: make([]apitypes.DeadLetter, 0, len(replayed))}
	byApp := map[string][]int64{}
	for _, d := range replayed {
		out.Replayed = append(out.Replayed, DeadView(d))
		byApp[d.App] = append(byApp[d.App], d.ID)
	}
	detail := func(ids []int64) map[string]any {
		return map[string]any{"ids": ids, "force": req.Force, "params": params.Valid}
	}
	for _, app := range slices.Sorted(maps.Keys(byApp)) {
		s.audit(ctx, a, app, "dead.replay", deadObject(byApp[app]), detail(byApp[app]))
	}
	for _, r := range reach {
		if _, ok := byApp[r.App]; !ok { // an app the replayed jobs reach (child jobs)
			s.auditReach(ctx, a, []reached{r}, "dead.replay", deadObject(req.IDs), detail(req.IDs))
		}
	}
	s.wake()
	return out, nil
}

// deadObject is the audit log's object of a replay of ids: "dead/7,8,9",
// cut after 20 ids (the detail lists them all).
func deadObject(ids []int64) string {
	var b strings.Builder
	b.WriteString("dead/")
	for i, id := range ids {
		if i == 20 {
			b.WriteString(",…")
			break
		}
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatInt(id, 10))
	}
	return b.String()
}

// deadReach checks that a may start runs of the jobs of letters (as a
// retry does: the jobs' child jobs and waits may reach other apps) and
// returns the apps reached. A deleted job reaches nothing (the replay
// refuses its letters).
func (s *Service) deadReach(ctx context.Context, a Actor, letters []store.DeadLetter) ([]reached, error) {
	var jobs []int64
	for _, d := range letters {
		jobs = append(jobs, d.JobID)
	}
	slices.Sort(jobs)
	var out []reached
	for _, id := range slices.Compact(jobs) {
		j, err := s.st.Job(ctx, id)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		reach, err := s.jobActing(ctx, a, j)
		if err != nil {
			return nil, err
		}
		out = append(out, reach...)
	}
	return out, nil
}

// replayParams checks the params of a replay: absent or null; a JSON
// string, the params text as a job's params are written (e.g.
// "records=10"); or a JSON object (compacted) — either at most
// jobdef.MaxParamsBytes.
func replayParams(raw json.RawMessage) (sql.NullString, error) {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || string(t) == "null" {
		return sql.NullString{}, nil
	}
	refuse := func(v string) error {
		if len(v) > 40 {
			v = v[:40] + "…"
		}
		return refuseField(ErrInvalid, "params", msg.New(msg.DeadParamsObject, "value", v))
	}
	var text string
	switch t[0] {
	case '"':
		if err := json.Unmarshal(t, &text); err != nil {
			return sql.NullString{}, refuse(string(t))
		}
	case '{':
		var b bytes.Buffer
		if err := json.Compact(&b, t); err != nil {
			return sql.NullString{}, refuse(err.Error())
		}
		text = b.String()
	default:
		return sql.NullString{}, refuse(string(t))
	}
	if len(text) > jobdef.MaxParamsBytes {
		return sql.NullString{}, refuseField(ErrInvalid, "params", msg.New(msg.ValueMaxBytes, "max", jobdef.MaxParamsBytes))
	}
	return sql.NullString{String: text, Valid: true}, nil
}

// replayRefused is the refusal of a replay: each letter refused named in
// Fields as ids[i] (its place in the request), the text their reasons.
func replayRefused(kind error, refused []runstate.Refusal, index map[int64]int) error {
	slices.SortFunc(refused, func(x, y runstate.Refusal) int { return index[x.ID] - index[y.ID] })
	fields := make(map[string]msg.Msg, len(refused))
	texts := make([]string, 0, len(refused))
	for _, r := range refused {
		fields["ids["+strconv.Itoa(index[r.ID])+"]"] = r.Reason
		if len(texts) < 10 {
			texts = append(texts, r.Reason.String())
		}
	}
	text := "nothing was replayed: " + strings.Join(texts, "; ")
	if len(refused) > len(texts) {
		text += "; and " + strconv.Itoa(len(refused)-len(texts)) + " more (see fields)"
	}
	return refuse(kind, text, fields)
}
