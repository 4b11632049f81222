package api

import (
	"context"
	"errors"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/ops"
)

// AlarmChannels are the alarm channels configured on this admin
// (alarm.Notifier), the operator service's. Optional: without them routes
// cannot be set and channels cannot be tested.
type AlarmChannels = ops.AlarmChannels

// alarmRoutes registers the alarm routing endpoints (admin/ops
// alarm_routes.go).
func (s *Server) alarmRoutes(view, op, adm gin.IRoutes) {
	view.GET("/jobs/:id/alarm-routes", s.getAlarmRoutes)
	op.PUT("/jobs/:id/alarm-routes", s.putAlarmRoutes)
	adm.POST("/alarm-channels/:name/test", s.testAlarmChannel)
}

func (s *Server) getAlarmRoutes(c *gin.Context) {
	id, ok := idParam(c)
	if !ok {
		return
	}
	routes, err := s.ops.AlarmRoutes(c.Request.Context(), actor(c), id)
	if err != nil {
		s.opsFailed(c, err)
		return
	}
	c.JSON(http.StatusOK, routes)
}

func (s *Server) putAlarmRoutes(c *gin.Context) {
	// The job is read before the body, so that a job the user may not see
	// is answered (404) before a body in error (400).
	j, ok := s.loadJob(c)
	if !ok {
		return
	}
	var body struct {
		Routes *[]apitypes.AlarmRoute `json:"routes"`
	}
	if !decode(c, &body) {
		return
	}
	routes, err := s.ops.SetAlarmRoutes(c.Request.Context(), actor(c), j.ID, body.Routes)
	if err != nil {
		s.opsFailed(c, err)
		return
	}
	c.JSON(http.StatusOK, routes)
}

// testAlarmChannel: a channel that did not deliver is 502 (504 when it
// timed out), with its error.
func (s *Server) testAlarmChannel(c *gin.Context) {
	out, err := s.ops.TestAlarmChannel(c.Request.Context(), actor(c), c.Param("name"))
	switch {
	case refused(c, err):
	case errors.Is(err, context.DeadlineExceeded):
		fail(c, http.StatusGatewayTimeout, "test message not delivered: "+err.Error())
	case err != nil:
		fail(c, http.StatusBadGateway, "test message not delivered: "+err.Error())
	default:
		c.JSON(http.StatusOK, out)
	}
}
