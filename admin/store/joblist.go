package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// The orders of a job list (JobQuery.Sort).
const (
	JobSortName = "name"      // by name, then id (the default)
	JobSortID   = "id"        // by id: the order jobs were created in
	JobSortNext = "next_fire" // soonest next firing first; jobs without one last, by id
)

// The schedule kinds a job list filters on (JobQuery.Schedule): the first
// word of the job's cron text.
const (
	ScheduleCron  = "cron"  // 5 or 6 fields, or a descriptor such as @hourly
	ScheduleEvery = "every" // @every <duration>
	ScheduleAt    = "at"    // @at <time>: fires once
)

// The defaults of a job list's bounds (JobQuery).
const (
	// DefaultJobScanLimit is how many jobs one request of a search that
	// no index answers (a substring of the name, a schedule kind)
	// examines at most before it answers with what it found and a cursor.
	DefaultJobScanLimit = 5000
	// DefaultListCountCap is the most a list counts: above it the list
	// says "more than" the cap.
	DefaultListCountCap = 10_000
)

// JobCursor is where a page of a job list ends: the last job's sort key.
// The zero value is the first page.
type JobCursor struct {
	ID   int64
	Name string
	// Next is the last job's next firing (sort next_fire); NoNext says the
	// list has reached the jobs without one (then only ID counts).
	Next   int64
	NoNext bool
}

// JobQuery selects a page of ordinary jobs (not workflows' inline nodes)
// for JobPage. Zero fields do not filter.
type JobQuery struct {
	Apps     []string // only jobs of these apps (nil: every app; empty: none)
	App      string
	Handler  string
	State    string // scheduled, paused, disabled or completed (apitypes.Job.State)
	Schedule string // ScheduleCron, ScheduleEvery or ScheduleAt
	// Name is a search of the job name: a prefix (an index range), or
	// with Contains a substring anywhere (case-insensitive, examined at
	// most ScanLimit jobs per call).
	Name     string
	Contains bool
	Sort     string // JobSort*; "" is JobSortName
	After    JobCursor
	Limit    int // page size (1..1000; otherwise 100)
	// ScanLimit bounds the jobs a search that no index answers examines
	// per call (default DefaultJobScanLimit).
	ScanLimit int
}

// scans reports whether q tests something no index answers, so that a call
// examines a bounded window of jobs rather than reading until a page is full.
func (q JobQuery) scans() bool { return (q.Contains && q.Name != "") || q.Schedule != "" }

// JobPage is a page of a job list.
type JobPage struct {
	Jobs []Job
	// Next is the cursor of the next page; nil on the last one.
	Next *JobCursor
	// Partial says a bounded search stopped after Scanned jobs before it
	// filled the page: more may match after Next.
	Partial bool
	// Scanned is how many jobs the call examined (bounded searches only).
	Scanned int
}

// JobPage returns a page of jobs in q's order after q.After. Every
// condition but a substring of the name and the schedule kind is a range
// of an index in the page's order (migration 0036), so a page costs
// O(page); with those two the call examines at most q.ScanLimit jobs and
// says so (JobPage.Partial) rather than reading the table.
func (s *Store) JobPage(ctx context.Context, q JobQuery) (JobPage, error) {
	if q.Limit <= 0 || q.Limit > 1000 {
		q.Limit = 100
	}
	if q.ScanLimit <= 0 {
		q.ScanLimit = DefaultJobScanLimit
	}
	if q.Apps != nil && len(q.Apps) == 0 {
		return JobPage{}, nil
	}
	if q.Sort == JobSortNext && !q.After.NoNext {
		page, err := s.jobPagePart(ctx, q, false)
		if err != nil || page.Next != nil || page.Partial {
			return page, err
		}
		// The jobs with a next firing are done: go on with those without.
		rest := q
		rest.After = JobCursor{NoNext: true}
		rest.Limit = q.Limit - len(page.Jobs)
		rest.ScanLimit = q.ScanLimit - page.Scanned
		if rest.Limit <= 0 || (q.scans() && rest.ScanLimit <= 0) {
			c := JobCursor{NoNext: true}
			return JobPage{Jobs: page.Jobs, Next: &c, Partial: q.scans() && rest.Limit > 0, Scanned: page.Scanned}, nil
		}
		more, err := s.jobPagePart(ctx, rest, true)
		if err != nil {
			return page, err
		}
		more.Jobs = append(page.Jobs, more.Jobs...)
		more.Scanned += page.Scanned
		return more, nil
	}
	return s.jobPagePart(ctx, q, q.Sort == JobSortNext)
}

// jobFilters are the conditions of q but its keyset and its scanned tests.
func (s *Store) jobFilters(q JobQuery) filters {
	var w filters
	// Not an index's condition (nearly every job has no workflow): an
	// index on it would read the jobs unordered.
	w.add("COALESCE(workflow_id, 0) = 0")
	if q.Apps != nil {
		w.in("app", q.Apps)
	}
	if q.App != "" {
		w.add("app = ?", q.App)
	}
	if q.Handler != "" {
		w.add("handler = ?", q.Handler)
	}
	if q.State != "" {
		w.add("state = ?", q.State)
	}
	if q.Name != "" && !q.Contains {
		// The range is what an index reads (SQLite does not turn a LIKE
		// into one); the LIKE keeps the database's case rule.
		w.add(`name >= ? AND name < ? AND name LIKE ? ESCAPE '!'`, q.Name, q.Name+"\uffff", likePrefix(q.Name))
	}
	return w
}

// jobPagePart is JobPage within one part of the order: for sort next_fire,
// the jobs with a next firing (noNext false) or those without (true).
func (s *Store) jobPagePart(ctx context.Context, q JobQuery, noNext bool) (JobPage, error) {
	text, args := s.jobPageQuery(q, noNext)
	if !q.scans() {
		var jobs []Job
		if err := s.db.SelectContext(ctx, &jobs, text, args...); err != nil {
			return JobPage{}, fmt.Errorf("list jobs: %w", err)
		}
		out := JobPage{Jobs: jobs}
		if len(jobs) > q.Limit {
			out.Jobs = jobs[:q.Limit]
			c := jobCursor(out.Jobs[q.Limit-1], noNext)
			out.Next = &c
		}
		return out, nil
	}
	// A bounded window: the next ScanLimit jobs in order, tested here.
	type key struct {
		ID   int64         `db:"id"`
		Name string        `db:"name"`
		Next sql.NullInt64 `db:"next_fire_at"`
		Cron string        `db:"cron_expr"`
	}
	var window []key
	if err := s.db.SelectContext(ctx, &window, text, args...); err != nil {
		return JobPage{}, fmt.Errorf("search jobs: %w", err)
	}
	out := JobPage{Scanned: len(window)}
	needle := strings.ToLower(q.Name)
	var ids []int64
	var last *key
	for i := range window {
		k := &window[i]
		if len(ids) == q.Limit {
			break // a full page: the next one starts after the last match
		}
		last = k
		if q.Contains && q.Name != "" && !strings.Contains(strings.ToLower(k.Name), needle) {
			continue
		}
		if q.Schedule != "" && ScheduleKind(k.Cron) != q.Schedule {
			continue
		}
		ids = append(ids, k.ID)
	}
	switch {
	case len(ids) == q.Limit && last != &window[len(window)-1]:
		out.Scanned = indexOf(window, last) + 1
		out.Next = &JobCursor{ID: last.ID, Name: last.Name, Next: last.Next.Int64, NoNext: noNext}
	case len(window) == q.ScanLimit:
		// The window ran out before the page was full: more jobs may
		// match after its last one.
		out.Partial = true
		out.Next = &JobCursor{ID: last.ID, Name: last.Name, Next: last.Next.Int64, NoNext: noNext}
	}
	if len(ids) == 0 {
		return out, nil
	}
	jobs, err := s.jobsByIDs(ctx, ids)
	if err != nil {
		return JobPage{}, err
	}
	out.Jobs = jobs
	return out, nil
}

// jobPageQuery is the query of jobPagePart and its arguments: a page of
// q.Limit + 1 jobs, or (q.scans()) a window of q.ScanLimit keys.
func (s *Store) jobPageQuery(q JobQuery, noNext bool) (string, []any) {
	w := s.jobFilters(q)
	a := q.After
	page, scan := qJobPageByName, qJobScanByName
	switch q.Sort {
	case JobSortID:
		page, scan = qJobPageByID, qJobScanByID
		w.add("id > ?", a.ID)
	case JobSortNext:
		page, scan = qJobPageByNext, qJobScanByNext
		switch {
		case noNext:
			w.add("next_fire_at IS NULL AND id > ?", a.ID)
		case a.ID == 0:
			w.add("next_fire_at IS NOT NULL")
		default:
			w.add("next_fire_at >= ? AND (next_fire_at > ? OR id > ?)", a.Next, a.Next, a.ID)
		}
	default:
		if a.ID != 0 {
			w.add("name >= ? AND (name > ? OR id > ?)", a.Name, a.Name, a.ID)
		}
	}
	text, n := s.q.get(page), q.Limit+1
	if q.scans() {
		text, n = s.q.get(scan), q.ScanLimit
	}
	if q.Sort != JobSortID && q.Sort != JobSortNext {
		text = strings.Replace(text, "ORDER BY name, id", "ORDER BY "+orderByName(q), 1)
	}
	return w.query(text, n)
}

// orderByName is the order by name for q: it starts with the columns q's
// filters fix (app, state), which change nothing in the order but make it
// the order of the index of those columns (uk_job_app_name,
// idx_job_app_state_name, idx_job_state_name), so that MariaDB reads that
// index rather than walk idx_job_name past every other app's jobs. Within
// one app a name is unique: "app, name" is the whole order of the unique
// key uk_job_app_name, whose entries MariaDB does not order by id.
func orderByName(q JobQuery) string {
	switch {
	case q.App != "" && q.State != "":
		return "app, state, name, id"
	case q.App != "":
		return "app, name"
	case q.State != "":
		return "state, name, id"
	}
	return "name, id"
}

// indexOf is the index of k in window (k points into window).
func indexOf[T any](window []T, k *T) int {
	for i := range window {
		if &window[i] == k {
			return i
		}
	}
	return len(window) - 1
}

// jobsByIDs reads jobs ids whole, in the order of ids.
func (s *Store) jobsByIDs(ctx context.Context, ids []int64) ([]Job, error) {
	got, err := s.q.JobsByIDs(ctx, s.db, ids)
	if err != nil {
		return nil, fmt.Errorf("read %d jobs: %w", len(ids), err)
	}
	byID := make(map[int64]Job, len(got))
	for _, j := range got {
		byID[j.ID] = j
	}
	out := make([]Job, 0, len(ids))
	for _, id := range ids {
		if j, ok := byID[id]; ok {
			out = append(out, j)
		}
	}
	return out, nil
}

// jobCursor is the cursor after job j.
func jobCursor(j Job, noNext bool) JobCursor {
	return JobCursor{ID: j.ID, Name: j.Name, Next: j.NextFireAt.Int64, NoNext: noNext}
}

// ScheduleKind is the kind of the cron text expr: ScheduleEvery,
// ScheduleAt or ScheduleCron.
func ScheduleKind(expr string) string {
	f := strings.Fields(strings.ToLower(expr))
	switch {
	case len(f) > 0 && f[0] == "@every":
		return ScheduleEvery
	case len(f) > 0 && f[0] == "@at":
		return ScheduleAt
	}
	return ScheduleCron
}

// CountJobs counts the jobs q selects (its cursor and bounded tests aside):
// exact and read from app_job_count when q filters on apps alone, otherwise
// counted up to limit (exact says whether the count is below it). A query
// with a bounded search is not counted (ok false).
func (s *Store) CountJobs(ctx context.Context, q JobQuery, limit int) (n int64, exact, ok bool, err error) {
	if q.scans() {
		return 0, false, false, nil
	}
	if q.Apps != nil && len(q.Apps) == 0 {
		return 0, true, true, nil
	}
	if q.Handler == "" && q.State == "" && q.Name == "" {
		var w filters
		if q.Apps != nil {
			w.in("app", q.Apps)
		}
		if q.App != "" {
			w.add("app = ?", q.App)
		}
		text, args := w.query(s.q.get(qAppJobCountSum))
		if err := s.db.GetContext(ctx, &n, text, args...); err != nil {
			return 0, false, false, fmt.Errorf("count jobs: %w", err)
		}
		return n, true, true, nil
	}
	if limit <= 0 {
		limit = DefaultListCountCap
	}
	w := s.jobFilters(q)
	text, args := w.query(s.q.get(qJobCountCapped), limit+1)
	if err := s.db.GetContext(ctx, &n, text, args...); err != nil {
		return 0, false, false, fmt.Errorf("count jobs: %w", err)
	}
	if n > int64(limit) {
		return int64(limit), false, true, nil
	}
	return n, true, true, nil
}
