package api

import (
	"net/http"
	"slices"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/jobdef"
	"github.com/shardjob/shardjob/admin/msg"
)

// cloneJob copies a job's definition under a new name (and optionally into
// another app the user may manage). The copy starts disabled unless the
// request says otherwise; child jobs are not copied (a child triggered by
// two parents is rarely what a copy means).
func (s *Server) cloneJob(c *gin.Context) {
	j, ok := s.loadOwnJob(c)
	if !ok {
		return
	}
	var req apitypes.CloneRequest
	if !decode(c, &req) {
		return
	}
	if req.App == "" {
		req.App = j.App
	}
	if !currentUser(c).AppAllowed(req.App) {
		c.AbortWithStatusJSON(http.StatusForbidden, errorBody{Error: "you may not manage jobs of app " + req.App,
			Fields: map[string]msg.Msg{"app": msg.New(msg.NotYourAppShort)}})
		return
	}
	enabled := false
	if req.Enabled != nil {
		enabled = *req.Enabled
	}
	// The copy has the original's definition under its new name; child
	// jobs are not copied.
	spec := apitypes.JobSpec{JobDef: jobdef.View(j).JobDef}
	spec.App, spec.Name, spec.Enabled = req.App, req.Name, &enabled
	v, err := jobdef.Validate(spec, s.cfg.Clock.Now())
	if err != nil {
		if !s.validationFailed(c, err) {
			s.internal(c, err)
		}
		return
	}
	// A calendar of the original's app is not one the copy may use in
	// another app: 400 naming calendar_id.
	v, _, _, ok = s.withCalendar(c, v)
	if !ok {
		return
	}
	copied, ok := s.insertJob(c, v.Job)
	if !ok {
		return
	}
	s.audit(c, copied.App, "job.clone", "job/"+strconv.FormatInt(copied.ID, 10), map[string]any{"from": j.ID, "after": jobdef.View(copied)})
	s.wake()
	c.JSON(http.StatusCreated, s.withWarnings(c, jobdef.View(copied)))
}

// listApps lists the apps the user may see, from their jobs and executors.
func (s *Server) listApps(c *gin.Context) {
	ctx := c.Request.Context()
	u := currentUser(c)
	apps := map[string]*apitypes.AppView{}
	get := func(name string) *apitypes.AppView {
		a, ok := apps[name]
		if !ok {
			a = &apitypes.AppView{Name: name}
			apps[name] = a
		}
		return a
	}
	counts, err := s.st.AppJobCounts(ctx)
	if err != nil {
		s.internal(c, err)
		return
	}
	for _, n := range counts {
		if u.AppAllowed(n.App) {
			get(n.App).Jobs = int(n.Jobs)
		}
	}
	execs, err := s.st.Executors(ctx)
	if err != nil {
		s.internal(c, err)
		return
	}
	for _, e := range execs {
		if !u.AppAllowed(e.App) || e.State == "gone" {
			continue
		}
		a := get(e.App)
		a.Executors++
		if e.State == "online" {
			a.ExecutorsOnline++
		}
	}
	out := make([]apitypes.AppView, 0, len(apps))
	for _, a := range apps {
		out = append(out, *a)
	}
	slices.SortFunc(out, func(a, b apitypes.AppView) int {
		if a.Name < b.Name {
			return -1
		}
		if a.Name > b.Name {
			return 1
		}
		return 0
	})
	c.JSON(http.StatusOK, gin.H{"apps": out})
}

// runSlots lists the slots of a run, each with its current attempt, in slot
// order (the run detail's grid; GET /runs/:id has every attempt).
func (s *Server) runSlots(c *gin.Context) {
	id, ok := idParam(c)
	if !ok {
		return
	}
	if _, ok := s.loadRun(c, id); !ok {
		return
	}
	atts, err := s.st.Attempts(c.Request.Context(), id)
	if err != nil {
		s.internal(c, err)
		return
	}
	bySlot := map[int]*apitypes.Slot{}
	var order []int
	for _, a := range atts { // by slot, then attempt
		v, ok := bySlot[a.Slot]
		if !ok {
			v = &apitypes.Slot{Slot: a.Slot}
			bySlot[a.Slot] = v
			order = append(order, a.Slot)
		}
		v.Attempts++
		if a.Current {
			v.Current = attemptView(a)
		}
	}
	out := make([]apitypes.Slot, 0, len(order))
	for _, slot := range order {
		out = append(out, *bySlot[slot])
	}
	c.JSON(http.StatusOK, gin.H{"slots": out})
}
