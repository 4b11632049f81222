package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/shardjob/shardjob/admin/apitypes"
)

// calendarRoutes registers the business calendars (admin/ops:
// calendars.go): everyone who may read sees the global calendars and those
// of their apps; operators manage their apps' calendars, admins the global
// ones (app "").
func (s *Server) calendarRoutes(view, op gin.IRoutes) {
	view.GET("/calendars", s.listCalendars)
	view.GET("/calendars/:id", s.getCalendar)
	view.GET("/calendars/:id/export", s.exportCalendar)
	op.POST("/calendars", s.createCalendar)
	op.PUT("/calendars/:id", s.updateCalendar)
	op.DELETE("/calendars/:id", s.deleteCalendar)
}

func (s *Server) listCalendars(c *gin.Context) {
	out, err := s.ops.Calendars(c.Request.Context(), actor(c))
	if err != nil {
		s.opsFailed(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"calendars": out})
}

func (s *Server) getCalendar(c *gin.Context) {
	id, ok := idParam(c)
	if !ok {
		return
	}
	v, err := s.ops.Calendar(c.Request.Context(), actor(c), id)
	if err != nil {
		s.opsFailed(c, err)
		return
	}
	c.JSON(http.StatusOK, v)
}

// exportCalendar answers the days as CSV (date,kind,name), the format the
// import reads back.
func (s *Server) exportCalendar(c *gin.Context) {
	id, ok := idParam(c)
	if !ok {
		return
	}
	name, csv, err := s.ops.ExportCalendar(c.Request.Context(), actor(c), id, c.Query("format"))
	if err != nil {
		s.opsFailed(c, err)
		return
	}
	c.Header("Content-Disposition", `attachment; filename="`+name+`.csv"`)
	c.Data(http.StatusOK, "text/csv; charset=utf-8", csv)
}

func (s *Server) createCalendar(c *gin.Context) {
	var spec apitypes.CalendarSpec
	if !decode(c, &spec) {
		return
	}
	v, err := s.ops.CreateCalendar(c.Request.Context(), actor(c), spec)
	if err != nil {
		s.opsFailed(c, err)
		return
	}
	c.JSON(http.StatusCreated, v)
}

func (s *Server) updateCalendar(c *gin.Context) {
	// The calendar is read before the body, so that one the user may not
	// see is answered (404) before a body in error (400).
	id, ok := idParam(c)
	if !ok {
		return
	}
	if _, err := s.ops.StoredCalendar(c.Request.Context(), actor(c), id); err != nil {
		s.opsFailed(c, err)
		return
	}
	var spec apitypes.CalendarSpec
	if !decode(c, &spec) {
		return
	}
	v, err := s.ops.UpdateCalendar(c.Request.Context(), actor(c), id, spec)
	if err != nil {
		s.opsFailed(c, err)
		return
	}
	c.JSON(http.StatusOK, v)
}

func (s *Server) deleteCalendar(c *gin.Context) {
	id, ok := idParam(c)
	if !ok {
		return
	}
	if err := s.ops.DeleteCalendar(c.Request.Context(), actor(c), id); err != nil {
		s.opsFailed(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"deleted": id})
}
