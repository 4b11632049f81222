package ops

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/auth"
	"github.com/shardjob/shardjob/admin/backfill"
	"github.com/shardjob/shardjob/admin/internal/fielderr"
	"github.com/shardjob/shardjob/admin/jobdef"
	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/sdk/names"
)

// Limits of what an app's team says of it.
const (
	// MaxAppDescription bounds an app's description, in characters.
	MaxAppDescription = 1000
	// MaxAppOwners bounds an app's owners, and MaxAppOwnerLen each of them.
	MaxAppOwners   = 20
	MaxAppOwnerLen = 128
)

func appObject(name string) string { return "app/" + name }

// AppView is app a as the API shows it, with the counts of its jobs and
// executors.
func AppView(a store.App) apitypes.AppView {
	owners := a.OwnerList()
	if owners == nil {
		owners = []string{}
	}
	return apitypes.AppView{Name: a.Name, Description: a.Description, Owners: owners, Version: a.Version,
		MaxJobs: optInt(a.MaxJobs), MaxSlotsPerRun: optInt(a.MaxSlotsPerRun), MaxBackfillParallel: optInt(a.MaxBackfillParallel),
		MaxRunningSlots: optInt(a.MaxRunningSlots), MaxStartsPerSecond: optInt(a.MaxStartsPerSecond), Weight: max(a.Weight.Int64, 1), MaxLogBytesPerDay: optInt(a.MaxLogBytesPerDay),
		CreatedAt: msTime(a.CreatedAt), CreatedBy: a.CreatedBy, UpdatedAt: msTime(a.UpdatedAt), UpdatedBy: a.UpdatedBy}
}

// Apps lists the apps a may see, by name, with what their teams say of
// them and the counts of their jobs and executors.
func (s *Service) Apps(ctx context.Context, a Actor) ([]apitypes.AppView, error) {
	u := a.User
	rows, err := s.st.Apps(ctx)
	if err != nil {
		return nil, err
	}
	apps := map[string]*apitypes.AppView{}
	for _, r := range rows {
		if u.AppAllowed(r.Name) {
			v := AppView(r)
			apps[r.Name] = &v
		}
	}
	// An app is a row from its first job or executor on; one named by a
	// job or an executor of an admin of the previous version may still
	// lack it: it is listed all the same.
	get := func(name string) *apitypes.AppView {
		v, ok := apps[name]
		if !ok {
			v = &apitypes.AppView{Name: name, Owners: []string{}}
			apps[name] = v
		}
		return v
	}
	counts, err := s.st.AppJobCounts(ctx)
	if err != nil {
		return nil, err
	}
	for _, n := range counts {
		if u.AppAllowed(n.App) {
			get(n.App).Jobs = int(n.Jobs)
		}
	}
	execs, err := s.st.Executors(ctx)
	if err != nil {
		return nil, err
	}
	for _, e := range execs {
		if !u.AppAllowed(e.App) || e.State == store.ExecutorGone {
			continue
		}
		v := get(e.App)
		v.Executors++
		if e.State == store.ExecutorOnline {
			v.ExecutorsOnline++
		}
	}
	out := make([]apitypes.AppView, 0, len(apps))
	for _, v := range apps {
		if v.MaxLogBytesPerDay != nil { // one query per app with a log quota
			if err := s.logsToday(ctx, v); err != nil {
				return nil, err
			}
		}
		out = append(out, *v)
	}
	slices.SortFunc(out, func(x, y apitypes.AppView) int { return cmp.Compare(x.Name, y.Name) })
	return out, nil
}

// logsToday fills in the run-log bytes v's app stored today (UTC) and the
// lines its quota dropped.
func (s *Service) logsToday(ctx context.Context, v *apitypes.AppView) error {
	var err error
	v.LogBytesToday, v.LogLinesDroppedToday, err = s.st.AppLogDay(ctx, v.Name, s.cfg.Clock.Now().UTC().Format(time.DateOnly))
	return err
}

// App returns app name as the API shows it: ErrNotFound when there is no
// such app or a may not see it (the same answer).
func (s *Service) App(ctx context.Context, a Actor, name string) (apitypes.AppView, error) {
	r, err := s.storedApp(ctx, a, name)
	if err != nil {
		return apitypes.AppView{}, err
	}
	all, err := s.Apps(ctx, Actor{User: store.User{Role: auth.RoleViewer, Apps: name}}) // its counts
	if err != nil {
		return apitypes.AppView{}, err
	}
	v := AppView(r)
	for _, c := range all {
		if c.Name == name {
			v.Jobs, v.Executors, v.ExecutorsOnline = c.Jobs, c.Executors, c.ExecutorsOnline
			v.LogBytesToday, v.LogLinesDroppedToday = c.LogBytesToday, c.LogLinesDroppedToday
		}
	}
	return v, nil
}

func (s *Service) storedApp(ctx context.Context, a Actor, name string) (store.App, error) {
	r, err := s.st.App(ctx, name)
	if errors.Is(err, store.ErrNotFound) || (err == nil && !a.User.AppAllowed(name)) {
		return r, &Error{Kind: ErrNotFound, Msg: "app " + name + " does not exist", Object: "app"}
	}
	return r, err
}

func optInt(v sql.NullInt64) *int64 {
	if !v.Valid {
		return nil
	}
	return &v.Int64
}

// The most a quota may be set to: a job's slot limit, a backfill's
// parallel limit, and ten million jobs.
const (
	maxQuotaJobs     = 10_000_000
	maxQuotaSlots    = jobdef.MaxSlots
	maxQuotaParallel = backfill.MaxParallel
	// maxStartsPerSecond is the largest start rate of an app.
	maxStartsPerSecond = 1_000_000
	// maxWeight is the largest weight of an app.
	maxWeight = 1000
	// maxLogBytesPerDay is the largest daily log quota of an app (1 TiB).
	maxLogBytesPerDay = 1 << 40
)

// appQuotas checks the quotas spec sets into row (0 removes one, left out
// keeps it): admins only (ErrForbidden), each within its range.
func appQuotas(a Actor, spec apitypes.AppSpec, row *store.App, fields map[string]msg.Msg) error {
	set := func(field string, v *int64, max int64, dst *sql.NullInt64) {
		switch {
		case v == nil:
		case *v < 0 || *v > max:
			fields[field] = msg.New(msg.AppQuotaRange, "max", max)
		case *v == 0:
			*dst = sql.NullInt64{}
		default:
			*dst = sql.NullInt64{Int64: *v, Valid: true}
		}
	}
	field := ""
	for _, q := range []struct {
		name string
		v    *int64
	}{{"max_jobs", spec.MaxJobs}, {"max_slots_per_run", spec.MaxSlotsPerRun}, {"max_backfill_parallel", spec.MaxBackfillParallel}, {"max_running_slots", spec.MaxRunningSlots}, {"max_starts_per_second", spec.MaxStartsPerSecond}, {"weight", spec.Weight}, {"max_log_bytes_per_day", spec.MaxLogBytesPerDay}} {
		if q.v != nil && field == "" {
			field = q.name
		}
	}
	if field == "" {
		return nil
	}
	if err := needRole(a, auth.RoleAdmin); err != nil {
		return refuse(ErrForbidden, msg.New(msg.AppQuotaAdmins).String(), map[string]msg.Msg{field: msg.New(msg.AppQuotaAdmins)})
	}
	set("max_jobs", spec.MaxJobs, maxQuotaJobs, &row.MaxJobs)
	set("max_slots_per_run", spec.MaxSlotsPerRun, maxQuotaSlots, &row.MaxSlotsPerRun)
	set("max_backfill_parallel", spec.MaxBackfillParallel, maxQuotaParallel, &row.MaxBackfillParallel)
	set("max_running_slots", spec.MaxRunningSlots, jobdef.MaxRunningSlots, &row.MaxRunningSlots)
	set("max_starts_per_second", spec.MaxStartsPerSecond, maxStartsPerSecond, &row.MaxStartsPerSecond)
	set("max_log_bytes_per_day", spec.MaxLogBytesPerDay, maxLogBytesPerDay, &row.MaxLogBytesPerDay)
	switch w := spec.Weight; {
	case w == nil:
	case *w < 1 || *w > maxWeight:
		fields["weight"] = msg.New(msg.ValueBetween, "min", 1, "max", maxWeight)
	case *w == 1:
		row.Weight = sql.NullInt64{}
	default:
		row.Weight = sql.NullInt64{Int64: *w, Valid: true}
	}
	return nil
}

// appFields checks the description and owners of spec into row, naming
// the fields in error.
func appFields(spec apitypes.AppSpec, row *store.App, fields map[string]msg.Msg) {
	if spec.Description != nil {
		row.Description = strings.TrimSpace(*spec.Description)
		if n := len([]rune(row.Description)); n > MaxAppDescription {
			fields["description"] = msg.New(msg.ValueMaxChars, "max", MaxAppDescription)
		}
	}
	if spec.Owners != nil {
		owners := make([]string, 0, len(*spec.Owners))
		for _, o := range *spec.Owners {
			o = strings.TrimSpace(o)
			if o == "" || len(o) > MaxAppOwnerLen || strings.ContainsFunc(o, func(r rune) bool { return r == ',' || unicode.IsSpace(r) || unicode.IsControl(r) }) {
				shown := o
				if r := []rune(shown); len(r) > 40 {
					shown = string(r[:39]) + "…"
				}
				fields["owners"] = msg.New(msg.AppOwnerInvalid, "value", strconv.Quote(shown), "max", MaxAppOwnerLen)
				break
			}
			if !slices.Contains(owners, o) {
				owners = append(owners, o)
			}
		}
		if len(owners) > MaxAppOwners {
			fields["owners"] = msg.New(msg.AppOwnersMax, "max", MaxAppOwners)
		}
		row.Owners = strings.Join(owners, ",")
	}
}

// CreateApp creates app spec.Name with what spec says of it: admins only
// (ErrForbidden), a name by the names rule (ErrInvalid naming the field),
// an ErrConflict when the app exists (PATCH it instead). Apps also come
// into being with their first job or executor, with nothing said of them.
func (s *Service) CreateApp(ctx context.Context, a Actor, spec apitypes.AppSpec) (apitypes.AppView, error) {
	if err := needRole(a, auth.RoleAdmin); err != nil {
		return apitypes.AppView{}, err
	}
	fields := map[string]msg.Msg{}
	if p := names.Problem(spec.Name); p != "" {
		fields["name"] = msg.New(msg.Text, "text", p)
	}
	row := store.App{Name: spec.Name, CreatedBy: a.User.Username}
	appFields(spec, &row, fields)
	if err := appQuotas(a, spec, &row, fields); err != nil {
		return apitypes.AppView{}, err
	}
	if len(fields) > 0 {
		return apitypes.AppView{}, refuse(ErrInvalid, fielderr.Format("invalid app", jobdef.FieldMsgs(fields).English()), fields)
	}
	if err := s.st.CreateApp(ctx, row); errors.Is(err, store.ErrConflict) {
		return apitypes.AppView{}, refuseField(ErrConflict, "name", msg.New(msg.AppNameTaken, "app", spec.Name))
	} else if err != nil {
		return apitypes.AppView{}, err
	}
	v, err := s.App(ctx, a, spec.Name)
	if err != nil {
		return v, err
	}
	s.audit(ctx, a, spec.Name, "app.create", appObject(spec.Name), appAudit(v))
	return v, nil
}

// UpdateApp changes what app name's team says of it (the fields spec
// sets), guarded by the version spec says it read (ErrInvalid without one,
// ErrConflict when the app changed since): admins and the operators
// allowed on the app.
func (s *Service) UpdateApp(ctx context.Context, a Actor, name string, spec apitypes.AppSpec) (apitypes.AppView, error) {
	row, err := s.storedApp(ctx, a, name)
	if err != nil {
		return apitypes.AppView{}, err
	}
	if err := needRole(a, auth.RoleOperator); err != nil {
		return apitypes.AppView{}, err
	}
	fields := map[string]msg.Msg{}
	if spec.Name != "" && spec.Name != name {
		fields["name"] = msg.New(msg.MustStay, "value", name)
	}
	if spec.Version == 0 {
		fields["version"] = msg.New(msg.JobVersionRequired, "version", row.Version)
	}
	before := AppView(row)
	row.Version, row.UpdatedBy = spec.Version, a.User.Username
	appFields(spec, &row, fields)
	if err := appQuotas(a, spec, &row, fields); err != nil {
		return apitypes.AppView{}, err
	}
	if len(fields) > 0 {
		return apitypes.AppView{}, refuse(ErrInvalid, fielderr.Format("invalid app", jobdef.FieldMsgs(fields).English()), fields)
	}
	if err := s.st.UpdateApp(ctx, row); errors.Is(err, store.ErrConflict) {
		return apitypes.AppView{}, refuse(ErrConflict, err.Error(), nil)
	} else if err != nil {
		return apitypes.AppView{}, err
	}
	v, err := s.App(ctx, a, name)
	if err != nil {
		return v, err
	}
	s.audit(ctx, a, name, "app.update", appObject(name), map[string]any{"before": appAudit(before), "after": appAudit(v), "version": v.Version})
	return v, nil
}

// appAudit is what an audit entry keeps of an app.
func appAudit(v apitypes.AppView) map[string]any {
	return map[string]any{"description": v.Description, "owners": v.Owners,
		"max_jobs": v.MaxJobs, "max_slots_per_run": v.MaxSlotsPerRun, "max_backfill_parallel": v.MaxBackfillParallel,
		"max_running_slots": v.MaxRunningSlots, "max_starts_per_second": v.MaxStartsPerSecond, "weight": v.Weight, "max_log_bytes_per_day": v.MaxLogBytesPerDay}
}

// quotaOf is the app row of app, for its quotas: no quota when it has no
// row.
func (s *Service) quotaOf(ctx context.Context, app string) (store.App, error) {
	r, err := s.st.App(ctx, app)
	if errors.Is(err, store.ErrNotFound) {
		return store.App{Name: app}, nil
	}
	return r, err
}

// checkJobQuotas refuses a job of app beyond the app's quotas: a new one
// (newJob) when the app has max_jobs ordinary jobs already (ErrConflict
// naming app), and slots beyond max_slots_per_run (ErrInvalid naming
// slots).
func (s *Service) checkJobQuotas(ctx context.Context, app string, slots int, newJob bool) error {
	q, err := s.quotaOf(ctx, app)
	if err != nil {
		return err
	}
	if q.MaxSlotsPerRun.Valid && int64(slots) > q.MaxSlotsPerRun.Int64 {
		m := msg.New(msg.AppQuotaSlots, "max", q.MaxSlotsPerRun.Int64, "app", app)
		return refuse(ErrInvalid, m.String(), map[string]msg.Msg{"slots": m})
	}
	if !newJob || !q.MaxJobs.Valid {
		return nil
	}
	counts, err := s.st.AppJobCounts(ctx)
	if err != nil {
		return err
	}
	for _, c := range counts {
		if c.App == app && c.Jobs >= q.MaxJobs.Int64 {
			m := msg.New(msg.AppQuotaJobs, "app", app, "jobs", c.Jobs, "max", q.MaxJobs.Int64)
			return refuse(ErrConflict, m.String(), map[string]msg.Msg{"app": m})
		}
	}
	return nil
}

// checkBackfillQuota refuses a backfill of app running more than its
// max_backfill_parallel at once (ErrInvalid naming parallel).
func (s *Service) checkBackfillQuota(ctx context.Context, app string, parallel int) error {
	q, err := s.quotaOf(ctx, app)
	if err != nil {
		return err
	}
	if q.MaxBackfillParallel.Valid && int64(parallel) > q.MaxBackfillParallel.Int64 {
		m := msg.New(msg.AppQuotaBackfil, "max", q.MaxBackfillParallel.Int64, "app", app)
		return refuse(ErrInvalid, m.String(), map[string]msg.Msg{"parallel": m})
	}
	return nil
}

// checkNodeSlots refuses a workflow whose inline nodes have more slots
// than its app's max_slots_per_run (ErrInvalid naming nodes[i].slots).
func (s *Service) checkNodeSlots(ctx context.Context, spec apitypes.WorkflowDef) error {
	q, err := s.quotaOf(ctx, spec.App)
	if err != nil || !q.MaxSlotsPerRun.Valid {
		return err
	}
	fields := map[string]msg.Msg{}
	for i, n := range spec.Nodes {
		if n.Job == nil && int64(max(n.SlotCount, 1)) > q.MaxSlotsPerRun.Int64 {
			fields[fmt.Sprintf("nodes[%d].slots", i)] = msg.New(msg.AppQuotaSlots, "max", q.MaxSlotsPerRun.Int64, "app", spec.App)
		}
	}
	if len(fields) > 0 {
		return refuse(ErrInvalid, fielderr.Format("invalid workflow", jobdef.FieldMsgs(fields).English()), fields)
	}
	return nil
}
