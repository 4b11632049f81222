package api

import (
	"net/http"
	"slices"

	"github.com/gin-gonic/gin"

	"github.com/shardjob/shardjob/admin/apitypes"
)

// cloneJob copies a job's definition under a new name (and optionally into
// another app the user may manage). The copy starts disabled unless the
// request says otherwise; child jobs are not copied (a child triggered by
// two parents is rarely what a copy means).
func (s *Server) cloneJob(c *gin.Context) {
	// The job is read before the body, as in updateJob.
	j, ok := s.loadOwnJob(c)
	if !ok {
		return
	}
	var req apitypes.CloneRequest
	if !decode(c, &req) {
		return
	}
	copied, err := s.ops.CloneJob(c.Request.Context(), actor(c), j.ID, req)
	if err != nil {
		s.opsFailed(c, err)
		return
	}
	c.JSON(http.StatusCreated, copied)
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
