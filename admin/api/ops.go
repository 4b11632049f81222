package api

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/shardjob/shardjob/admin/ops"
)

// actor is who sends the request, for admin/ops.
func actor(c *gin.Context) ops.Actor {
	a := ops.Actor{User: currentUser(c)}
	if k, ok := currentAPIKey(c); ok {
		a.APIKeyID = k.ID
	}
	return a
}

// opsFailed answers an error of admin/ops: a refusal with its status and
// fields (refused), anything else 500 (logged).
func (s *Server) opsFailed(c *gin.Context, err error) {
	if !refused(c, err) {
		s.internal(c, err)
	}
}

// refused answers err when it is a refusal of admin/ops (an *ops.Error),
// with the status of its kind; false for nil and for any other error. The
// one mapping of the operator service's errors to HTTP statuses.
func refused(c *gin.Context, err error) bool {
	var e *ops.Error
	if !errors.As(err, &e) {
		return false
	}
	text, status := e.Msg, http.StatusBadRequest
	if e.Object != "" {
		// The id as the request wrote it, in the id parameter ("" on a
		// route without one, as in the XXL-JOB attempt routes).
		text = strings.Replace(text, e.Object+" "+strconv.FormatInt(e.ID, 10), e.Object+" "+c.Param("id"), 1)
	}
	switch {
	case errors.Is(e, ops.ErrForbidden):
		status = http.StatusForbidden
	case errors.Is(e, ops.ErrNotFound):
		status = http.StatusNotFound
	case errors.Is(e, ops.ErrConflict):
		status = http.StatusConflict
	case errors.Is(e, ops.ErrUnavailable):
		status = http.StatusServiceUnavailable
	case errors.Is(e, ops.ErrCredential):
		status = http.StatusUnauthorized
		c.Header("WWW-Authenticate", `Bearer error="invalid_token"`)
	}
	c.AbortWithStatusJSON(status, errorBody{Error: text, Fields: e.Fields})
	return true
}
