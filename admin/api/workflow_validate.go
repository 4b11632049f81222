package api

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/workflowrun"
)

// workflowPreviewFirings is how many next firings a workflow's validation
// lists.
const workflowPreviewFirings = 5

// validateWorkflow checks a workflow definition as a save would — the
// graph, the schedule, the jobs its nodes name (in apps the caller may
// manage) — without saving it, and answers its drawing and next firings:
// the console's editor previews the draft as it is typed. Every mistake is
// a 400 naming its field, as on save.
func (s *Server) validateWorkflow(c *gin.Context) {
	var spec apitypes.WorkflowSpec
	if !decode(c, &spec) {
		return
	}
	now := s.cfg.Clock.Now()
	row, ok := s.workflowRow(c, spec.WorkflowDef, now)
	if !ok || !mayManageWorkflow(c, row.App) {
		return
	}
	cs, ok := s.checkWorkflowRefsOnCalendar(c, spec.WorkflowDef, &row)
	if !ok {
		return
	}
	layout, err := layoutOf(row)
	if err != nil {
		s.internal(c, err)
		return
	}
	out := apitypes.WorkflowValidation{Valid: true, Layout: layout, Next: []apitypes.WorkflowFiring{}}
	switch {
	case cs != nil:
		// On a business calendar: the firings as the engine makes them,
		// shifted ones at their new instant (the firings the calendar
		// removes are recorded as skipped runs, not listed here).
		for _, f := range cs.Preview(now, workflowPreviewFirings) {
			out.Next = append(out.Next, apitypes.WorkflowFiring{At: f.At.UTC(), Local: f.Local.Format(previewLayout),
				BusinessDate: f.Local.Format(time.DateOnly)})
		}
	case row.CronExpr != "":
		row.CreatedAt = now.UnixMilli() // the @every anchor of a new workflow
		sc, err := workflowrun.ScheduleOf(row)
		if err != nil { // workflowRow parsed it: not reached
			s.internal(c, err)
			return
		}
		for _, f := range sc.Preview(now, workflowPreviewFirings) {
			out.Next = append(out.Next, apitypes.WorkflowFiring{At: f.At.UTC(), Local: f.Local.Format(previewLayout),
				BusinessDate: f.Local.Format(time.DateOnly)})
		}
	}
	c.JSON(http.StatusOK, out)
}
