package api

import (
	"time"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/jobdef"
	"github.com/shardjob/shardjob/admin/jobrules"
	"github.com/shardjob/shardjob/admin/schedule"
)

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
