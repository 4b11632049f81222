package api

import (
	"context"
	"errors"
	"net/http"
	"net/mail"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/store"
)

// AlarmChannels are the alarm channels configured on this admin
// (alarm.Notifier). Optional: without them routes cannot be set and
// channels cannot be tested.
type AlarmChannels interface {
	// AlarmChannel reports whether a channel is configured and whether it
	// takes email recipients.
	AlarmChannel(name string) (exists, email bool)
	// SendTest sends a test message through the channel now.
	SendTest(ctx context.Context, name, actor string) error
}

// maxAlarmRoutes caps the routes of one job.
const maxAlarmRoutes = 50

// alarmRoutes registers the alarm routing endpoints.
func (s *Server) alarmRoutes(view, op, adm gin.IRoutes) {
	view.GET("/jobs/:id/alarm-routes", s.getAlarmRoutes)
	op.PUT("/jobs/:id/alarm-routes", s.putAlarmRoutes)
	adm.POST("/alarm-channels/:name/test", s.testAlarmChannel)
}

// alarmRoutesView is a job's stored routes as the API answers them.
func alarmRoutesView(routes []store.AlarmRoute) apitypes.AlarmRoutes {
	out := apitypes.AlarmRoutes{Routes: make([]apitypes.AlarmRoute, 0, len(routes))}
	for _, r := range routes {
		out.Routes = append(out.Routes, apitypes.AlarmRoute{Channel: r.Channel, Recipient: r.Recipient})
	}
	return out
}

func (s *Server) getAlarmRoutes(c *gin.Context) {
	j, ok := s.loadJob(c)
	if !ok {
		return
	}
	routes, err := s.st.AlarmRoutes(c.Request.Context(), j.ID)
	if err != nil {
		s.internal(c, err)
		return
	}
	c.JSON(http.StatusOK, alarmRoutesView(routes))
}

func (s *Server) putAlarmRoutes(c *gin.Context) {
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
	if body.Routes == nil {
		c.AbortWithStatusJSON(http.StatusBadRequest, errorBody{Error: "routes is required",
			Fields: map[string]msg.Msg{"routes": msg.New(msg.RoutesRequired)}})
		return
	}
	routes := make([]store.AlarmRoute, 0, len(*body.Routes))
	for _, r := range *body.Routes {
		routes = append(routes, store.AlarmRoute{Channel: r.Channel, Recipient: r.Recipient})
	}
	if fields := s.checkAlarmRoutes(routes); len(fields) > 0 {
		c.AbortWithStatusJSON(http.StatusBadRequest, errorBody{Error: "invalid alarm routes", Fields: fields})
		return
	}
	before, err := s.st.AlarmRoutes(c.Request.Context(), j.ID)
	if err != nil {
		s.internal(c, err)
		return
	}
	if err := s.st.SetAlarmRoutes(c.Request.Context(), j.ID, routes); err != nil {
		s.internal(c, err)
		return
	}
	after, err := s.st.AlarmRoutes(c.Request.Context(), j.ID)
	if err != nil {
		s.internal(c, err)
		return
	}
	s.audit(c, j.App, "job.alarm_routes", "job/"+strconv.FormatInt(j.ID, 10), map[string]any{"before": before, "after": after})
	c.JSON(http.StatusOK, alarmRoutesView(after))
}

// checkAlarmRoutes returns a message per invalid field ("routes[2].channel").
func (s *Server) checkAlarmRoutes(routes []store.AlarmRoute) map[string]msg.Msg {
	fields := map[string]msg.Msg{}
	if len(routes) > maxAlarmRoutes {
		fields["routes"] = msg.New(msg.RoutesMax, "max", maxAlarmRoutes)
		return fields
	}
	seen := map[store.AlarmRoute]int{}
	for i, r := range routes {
		at := "routes[" + strconv.Itoa(i) + "]"
		exists, email := false, false
		if s.cfg.AlarmChannels != nil {
			exists, email = s.cfg.AlarmChannels.AlarmChannel(r.Channel)
		}
		switch {
		case r.Channel == "":
			fields[at+".channel"] = msg.New(msg.RouteChannelRequired)
		case s.cfg.AlarmChannels == nil:
			fields[at+".channel"] = msg.New(msg.RouteNoChannels)
		case !exists:
			fields[at+".channel"] = msg.New(msg.RouteUnknownChannel, "channel", strconv.Quote(r.Channel))
		}
		if r.Recipient != "" {
			if a, err := mail.ParseAddress(r.Recipient); err != nil || a.Address != r.Recipient || len(r.Recipient) > 254 {
				fields[at+".recipient"] = msg.New(msg.RouteRecipientEmail)
			} else if exists && !email {
				fields[at+".recipient"] = msg.New(msg.RouteRecipientNotEmail, "channel", strconv.Quote(r.Channel))
			}
		}
		if j, dup := seen[r]; dup {
			fields[at] = msg.New(msg.RouteDuplicate, "index", j)
		}
		seen[r] = i
	}
	return fields
}

func (s *Server) testAlarmChannel(c *gin.Context) {
	name := c.Param("name")
	if s.cfg.AlarmChannels == nil {
		fail(c, http.StatusNotFound, "no alarm channels are configured on this admin (--alarm-channels)")
		return
	}
	if exists, _ := s.cfg.AlarmChannels.AlarmChannel(name); !exists {
		fail(c, http.StatusNotFound, "no alarm channel named "+strconv.Quote(name)+" is configured")
		return
	}
	user := currentUser(c).Username
	err := s.cfg.AlarmChannels.SendTest(c.Request.Context(), name, user)
	s.audit(c, noApp, "alarm_channel.test", "alarm-channel/"+name, map[string]any{"ok": err == nil})
	if err != nil {
		s.log.Warn("alarm channel test failed", "channel", name, "err", err)
		code := http.StatusBadGateway
		if errors.Is(err, context.DeadlineExceeded) {
			code = http.StatusGatewayTimeout
		}
		fail(c, code, "test message not delivered: "+err.Error())
		return
	}
	c.JSON(http.StatusOK, gin.H{"sent": true, "channel": name})
}
