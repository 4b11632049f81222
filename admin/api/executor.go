package api

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/shardjob/shardjob/admin/executorsvc"
	"github.com/shardjob/shardjob/sdk/protocol"
)

// signed verifies the HMAC signature of executor requests.
func (s *Server) signed(c *gin.Context) {
	if _, err := s.verifier.VerifyRequest(c.Request, s.cfg.MaxBodyBytes); err != nil {
		code := http.StatusUnauthorized
		var mbe *http.MaxBytesError
		switch {
		case errors.Is(err, protocol.ErrNonceUnchecked):
			// The database did not answer: not the executor's fault, and it
			// retries (a new signature, a new nonce).
			s.log.Error("executor request not checked for a replay: the nonce store failed", "path", c.Request.URL.Path, "err", err)
			c.AbortWithStatusJSON(http.StatusServiceUnavailable, protocol.Error{Error: protocol.ErrNonceUnchecked.Error() + " (the admin could not reach its database; see the admin log)"})
			return
		case errors.As(err, &mbe): // cut by limitBody, or over the verifier's own limit
			code = http.StatusRequestEntityTooLarge
		}
		s.log.Warn("refused executor request", "path", c.Request.URL.Path, "remote", c.ClientIP(), "err", err)
		c.AbortWithStatusJSON(code, protocol.Error{Error: err.Error()})
		return
	}
	c.Next()
}

func decodeSigned(c *gin.Context, v any) bool {
	if err := json.NewDecoder(c.Request.Body).Decode(v); err != nil {
		c.AbortWithStatusJSON(http.StatusBadRequest, protocol.Error{Error: "invalid JSON body: " + err.Error()})
		return false
	}
	return true
}

func (s *Server) heartbeat(c *gin.Context) {
	var req protocol.HeartbeatRequest
	if !decodeSigned(c, &req) {
		return
	}
	resp, err := s.proto.Heartbeat(c.Request.Context(), req)
	if err != nil {
		s.protoFail(c, err)
		return
	}
	c.JSON(http.StatusOK, resp)
}

func (s *Server) results(c *gin.Context) {
	var req protocol.ResultsRequest
	if !decodeSigned(c, &req) {
		return
	}
	resp, err := s.proto.Results(c.Request.Context(), req)
	if err != nil {
		s.protoFail(c, err)
		return
	}
	c.JSON(http.StatusOK, resp)
}

func (s *Server) deregister(c *gin.Context) {
	var req protocol.DeregisterRequest
	if !decodeSigned(c, &req) {
		return
	}
	if err := s.proto.Deregister(c.Request.Context(), req); err != nil {
		s.protoFail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"ok": true})
}

// protoFail answers an error of the executor protocol's service: its
// refusals with their message (400 for ErrInvalid, 409 for ErrConflict),
// anything else as a logged 500.
func (s *Server) protoFail(c *gin.Context, err error) {
	switch {
	case errors.Is(err, executorsvc.ErrInvalid):
		c.AbortWithStatusJSON(http.StatusBadRequest, protocol.Error{Error: err.Error()})
	case errors.Is(err, executorsvc.ErrConflict):
		c.AbortWithStatusJSON(http.StatusConflict, protocol.Error{Error: err.Error()})
	default:
		s.internalProto(c, err)
	}
}

func (s *Server) internalProto(c *gin.Context, err error) {
	s.log.Error("executor request failed", "path", c.Request.URL.Path, "err", err)
	c.AbortWithStatusJSON(http.StatusInternalServerError, protocol.Error{Error: "internal error; see the admin log"})
}
