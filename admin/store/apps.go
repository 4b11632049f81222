package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
)

// App is an app as an object (table app): what its team says of it. An
// app exists from the first job or executor that names it (EnsureApp); its
// limits come with issue 33's caps.
type App struct {
	Name        string `db:"name"`
	Description string `db:"description"`
	// Owners are whom to ask about the app (user names or e-mail
	// addresses), comma separated (OwnerList).
	Owners string `db:"owners"`
	// Quotas, set by admins (NULL: no limit): the most ordinary jobs, the
	// most slots of one run, the most runs of one backfill at once.
	MaxJobs             sql.NullInt64 `db:"max_jobs"`
	MaxSlotsPerRun      sql.NullInt64 `db:"max_slots_per_run"`
	MaxBackfillParallel sql.NullInt64 `db:"max_backfill_parallel"`
	// MaxRunningSlots caps the slots of the app's runs placed on executors
	// at once (assigned, queued or running); NULL: no cap. The leader holds
	// back the rest (scheduler, "Concurrency caps").
	MaxRunningSlots sql.NullInt64 `db:"max_running_slots"`
	// MaxStartsPerSecond limits how many of the app's runs the leader
	// starts a second (a token bucket); NULL: no limit.
	MaxStartsPerSecond sql.NullInt64 `db:"max_starts_per_second"`
	// Weight is the app's share of the platform's shared capacity
	// (--max-running-slots) when apps compete for it; NULL: 1.
	Weight sql.NullInt64 `db:"weight"`
	// MaxLogBytesPerDay is a quota on the run-log bytes the app stores a
	// UTC day; lines beyond it are dropped and counted. NULL: none.
	MaxLogBytesPerDay sql.NullInt64 `db:"max_log_bytes_per_day"`
	Version           int64         `db:"version"`
	CreatedAt         int64         `db:"created_at"`
	CreatedBy         string        `db:"created_by"`
	UpdatedAt         int64         `db:"updated_at"`
	UpdatedBy         string        `db:"updated_by"`
}

// OwnerList returns the owners one by one (nil for none).
func (a App) OwnerList() []string {
	if a.Owners == "" {
		return nil
	}
	return strings.Split(a.Owners, ",")
}

// Apps returns every app, by name.
func (s *Store) Apps(ctx context.Context) ([]App, error) {
	out, err := s.q.AppList(ctx, s.db)
	if err != nil {
		return nil, fmt.Errorf("apps: %w", err)
	}
	return out, nil
}

// App returns the app of that name, or ErrNotFound.
func (s *Store) App(ctx context.Context, name string) (App, error) {
	a, err := s.q.AppByName(ctx, s.db, name)
	if err != nil {
		return a, notFound(err, "app "+name)
	}
	return a, nil
}

// CreateApp inserts a with version 1 (CreatedBy is also its UpdatedBy); a
// name that has its row already is ErrConflict.
func (s *Store) CreateApp(ctx context.Context, a App) error {
	_, err := s.q.AppInsert(ctx, s.db, a)
	if isDuplicate(err) {
		return conflictf("app %s exists already", a.Name)
	}
	if err != nil {
		return fmt.Errorf("create app %s: %w", a.Name, err)
	}
	return nil
}

// EnsureApp creates the row of app, with nothing said of it, when it has
// none: the first job or executor that names an app makes it an object.
func (s *Store) EnsureApp(ctx context.Context, app string) error {
	if _, err := s.q.AppEnsure(ctx, s.db, app); err != nil {
		return fmt.Errorf("ensure app %s: %w", app, err)
	}
	return nil
}

// UpdateApp writes a's description and owners if a.Version is still the
// row's, bumping it: ErrConflict when someone changed it since,
// ErrNotFound when there is no such app.
func (s *Store) UpdateApp(ctx context.Context, a App) error {
	n, err := s.q.AppUpdate(ctx, s.db, a)
	if err != nil {
		return fmt.Errorf("update app %s: %w", a.Name, err)
	}
	if n > 0 {
		return nil
	}
	cur, err := s.App(ctx, a.Name)
	if errors.Is(err, ErrNotFound) {
		return err
	}
	if err != nil {
		return err
	}
	return conflictf("app %s was changed by someone else (version %d is stale, it is at %d): reload it and apply your change again", a.Name, a.Version, cur.Version)
}

// AppLimit is what limits the starts of an app's runs: its concurrency
// cap and its start rate (0: none).
type AppLimit struct {
	MaxRunningSlots    int64 `db:"max_running_slots"`
	MaxStartsPerSecond int64 `db:"max_starts_per_second"`
	Weight             int64 `db:"weight"` // 1 when not set
}

// AppCaps returns the limits of every app that has a concurrency cap or a
// start rate.
func (s *Store) AppCaps(ctx context.Context) (map[string]AppLimit, error) {
	rows, err := s.q.AppCaps(ctx, s.db)
	if err != nil {
		return nil, fmt.Errorf("caps of apps: %w", err)
	}
	out := make(map[string]AppLimit, len(rows))
	for _, r := range rows {
		out[r.Name] = AppLimit{MaxRunningSlots: r.MaxRunningSlots, MaxStartsPerSecond: r.MaxStartsPerSecond, Weight: r.Weight}
	}
	return out, nil
}

// PlacedSlotsOfApps counts, for each of apps, the slots of its runs placed
// on its executors and not ended (assigned, queued or running): what its
// concurrency cap limits. An app with none is left out.
func (s *Store) PlacedSlotsOfApps(ctx context.Context, apps []string) (map[string]int64, error) {
	out := map[string]int64{}
	if len(apps) == 0 {
		return out, nil
	}
	rows, err := s.q.AppsPlacedSlots(ctx, s.db, apps)
	if err != nil {
		return nil, fmt.Errorf("placed slots of %d apps: %w", len(apps), err)
	}
	for _, r := range rows {
		out[r.App] = r.N
	}
	return out, nil
}

// PlacedSlots counts every slot placed on an executor and not ended.
func (s *Store) PlacedSlots(ctx context.Context) (int64, error) {
	n, err := s.q.PlacedSlots(ctx, s.db)
	if err != nil {
		return 0, fmt.Errorf("placed slots: %w", err)
	}
	return n, nil
}

// PlacedSlotsOfJobs counts, for each of jobIDs, the slots of its running
// runs placed on executors and not ended: what the job's concurrency cap
// limits. A job with none is left out.
func (s *Store) PlacedSlotsOfJobs(ctx context.Context, jobIDs []int64) (map[int64]int64, error) {
	out := make(map[int64]int64, len(jobIDs))
	for start := 0; start < len(jobIDs); start += 1000 {
		rows, err := s.q.JobsPlacedSlots(ctx, s.db, jobIDs[start:min(start+1000, len(jobIDs))])
		if err != nil {
			return nil, fmt.Errorf("placed slots of %d jobs: %w", len(jobIDs), err)
		}
		for _, r := range rows {
			out[r.JobID] = r.N
		}
	}
	return out, nil
}

// QueueRunGroup is what waits to start of one app and priority for one
// reason: how many due pending runs, and the oldest one's scheduled time.
type QueueRunGroup struct {
	App      string `db:"app"`
	Priority int    `db:"priority"`
	Reason   string `db:"error"`
	Runs     int64  `db:"runs"`
	Oldest   int64  `db:"oldest"`
}

// QueueSlotGroup is how many slots of started runs of one app and priority
// wait for an executor, and when the oldest one's run started.
type QueueSlotGroup struct {
	App      string `db:"app"`
	Priority int    `db:"priority"`
	Slots    int64  `db:"slots"`
	Oldest   int64  `db:"oldest"`
}

// QueueRuns groups up to limit due pending runs (oldest first) by app,
// priority and reason; read reports how many runs it read (limit: there
// may be more).
func (s *Store) QueueRuns(ctx context.Context, nowMS int64, limit int) (groups []QueueRunGroup, read int64, err error) {
	if groups, err = s.q.QueueRuns(ctx, s.db, queueRunsParams{NowMS: nowMS, Limit: limit}); err != nil {
		return nil, 0, fmt.Errorf("queue of runs: %w", err)
	}
	for _, g := range groups {
		read += g.Runs
	}
	return groups, read, nil
}

// QueueSlots groups up to limit slots waiting for an executor (oldest
// first) by app and priority; read reports how many it read.
func (s *Store) QueueSlots(ctx context.Context, limit int) (groups []QueueSlotGroup, read int64, err error) {
	if groups, err = s.q.QueueSlots(ctx, s.db, limit); err != nil {
		return nil, 0, fmt.Errorf("queue of slots: %w", err)
	}
	for _, g := range groups {
		read += g.Slots
	}
	return groups, read, nil
}
