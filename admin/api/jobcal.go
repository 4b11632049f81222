package api

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/jobdef"
	"github.com/shardjob/shardjob/admin/jobrules"
	"github.com/shardjob/shardjob/admin/schedule"
)

// replanCalendarJobs sets the next firing of the jobs on calendar id after
// an edit of its days: a firing the edit moved earlier (shift previous onto
// a new working day) or removed is planned from now on the new days. Runs
// that exist stay as they are, and a firing already due is left to the
// leader, which decides it on the new days. A job the leader moved
// meanwhile is read again (the update is guarded by the value read).
func (s *Server) replanCalendarJobs(ctx context.Context, id int64) {
	jobs, err := s.st.JobsOfCalendar(ctx, id)
	if err != nil {
		s.log.Warn("cannot read the jobs of an edited calendar to plan them again; the leader plans them at their next firing", "calendar_id", id, "err", err)
		return
	}
	now := s.cfg.Clock.Now()
	for _, j := range jobs {
		for try := 0; try < 3 && j.Enabled && !j.Paused && j.NextFireAt.Valid && j.NextFireAt.Int64 > now.UnixMilli(); try++ {
			next, err := s.ops.NextFire(ctx, j, now)
			if err != nil {
				s.log.Warn("cannot plan a job on its edited calendar", "job_id", j.ID, "calendar_id", id, "err", err)
				break
			}
			if next == j.NextFireAt {
				break
			}
			ok, err := s.st.ReplanJob(ctx, j.ID, j.NextFireAt, next)
			if err != nil || ok {
				break
			}
			if j, err = s.st.Job(ctx, j.ID); err != nil {
				break
			}
		}
	}
	s.wake()
}

// refuseCalendarInUse answers 409 when jobs use calendar id (true).
func (s *Server) refuseCalendarInUse(c *gin.Context, id int64) bool {
	jobs, err := s.st.JobsOfCalendar(c.Request.Context(), id)
	if err != nil {
		s.internal(c, err)
		return true
	}
	if len(jobs) == 0 {
		return false
	}
	names := ""
	for i, j := range jobs {
		if i == 5 {
			names += ", …"
			break
		}
		if i > 0 {
			names += ", "
		}
		names += j.App + "/" + j.Name + " (" + strconv.FormatInt(j.ID, 10) + ")"
	}
	fail(c, http.StatusConflict, fmt.Sprintf("calendar %d is used by %d job(s): %s; set another calendar on them (or none) first", id, len(jobs), names))
	return true
}

// calendarPreview is the preview of a job on a calendar: up to n firings
// after now, each preceded by the candidates the calendar removed before
// it (Skipped, with their reason), a shifted firing with its note.
func calendarPreview(cs *schedule.CalendarSchedule, now time.Time, n int) []apitypes.Preview {
	name := cs.Calendar().Name()
	bd := cs.Schedule().BusinessDay()
	zone := cs.Schedule().Location().String()
	var out []apitypes.Preview
	for _, f := range cs.Preview(now, n) {
		for _, d := range f.Skipped {
			m := jobrules.CalendarSkipReason(d, name, bd)
			out = append(out, apitypes.Preview{At: d.Scheduled.UTC(), Local: d.Scheduled.Format(previewLayout), Zone: zone, Skipped: true,
				Note: m.String(), NoteCodes: []apitypes.Message{{Code: string(m.Code), Args: m.Args}}})
		}
		p := apitypes.Preview{At: f.At, Local: f.Local.Format(previewLayout), Zone: zone}
		if f.Decision.Shifted {
			m := jobdef.ShiftNote(f.Decision, name)
			from := f.Decision.Scheduled.UTC()
			p.ShiftedFrom, p.Note, p.NoteCodes = &from, m.String(), []apitypes.Message{{Code: string(m.Code), Args: m.Args}}
		}
		if more := f.SkippedCount - len(f.Skipped); more > 0 {
			p.SkippedMore = more
		}
		out = append(out, p)
	}
	return out
}
