package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/shardjob/shardjob/admin/apitypes"
)

// appRoutes serves the apps: everyone reads those they may see; admins
// create apps, and admins and the app's operators describe them (admin/ops:
// CreateApp, UpdateApp).
func (s *Server) appRoutes(view, op, adm *gin.RouterGroup) {
	view.GET("/apps", s.listApps)
	view.GET("/apps/:name", s.getApp)
	adm.POST("/apps", s.createApp)
	op.PATCH("/apps/:name", s.updateApp)
	view.GET("/queue", s.queue)
}

// queue says what waits to start in the apps the user may see.
func (s *Server) queue(c *gin.Context) {
	out, err := s.ops.Queue(c.Request.Context(), actor(c))
	if err != nil {
		s.opsFailed(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}

// listApps lists the apps the user may see.
func (s *Server) listApps(c *gin.Context) {
	out, err := s.ops.Apps(c.Request.Context(), actor(c))
	if err != nil {
		s.opsFailed(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"apps": out})
}

func (s *Server) getApp(c *gin.Context) {
	v, err := s.ops.App(c.Request.Context(), actor(c), c.Param("name"))
	if err != nil {
		s.opsFailed(c, err)
		return
	}
	c.JSON(http.StatusOK, v)
}

func (s *Server) createApp(c *gin.Context) {
	var spec apitypes.AppSpec
	if !decode(c, &spec) {
		return
	}
	v, err := s.ops.CreateApp(c.Request.Context(), actor(c), spec)
	if err != nil {
		s.opsFailed(c, err)
		return
	}
	c.JSON(http.StatusCreated, v)
}

func (s *Server) updateApp(c *gin.Context) {
	// The app is read before the body, so that one the user may not see is
	// answered (404) before a body in error (400).
	name := c.Param("name")
	if _, err := s.ops.App(c.Request.Context(), actor(c), name); err != nil {
		s.opsFailed(c, err)
		return
	}
	var spec apitypes.AppSpec
	if !decode(c, &spec) {
		return
	}
	v, err := s.ops.UpdateApp(c.Request.Context(), actor(c), name, spec)
	if err != nil {
		s.opsFailed(c, err)
		return
	}
	c.JSON(http.StatusOK, v)
}
