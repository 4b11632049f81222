package ops

import (
	"context"
	"net/mail"
	"strconv"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/auth"
	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/store"
)

// AlarmChannels are the alarm channels configured on this admin
// (alarm.Notifier).
type AlarmChannels interface {
	// AlarmChannel reports whether a channel is configured and whether it
	// takes email recipients.
	AlarmChannel(name string) (exists, email bool)
	// SendTest sends a test message through the channel now.
	SendTest(ctx context.Context, name, actor string) error
}

// maxAlarmRoutes caps the routes of one job.
const maxAlarmRoutes = 50

// alarmRoutesWire is a job's stored routes as the API answers them.
func alarmRoutesWire(routes []store.AlarmRoute) apitypes.AlarmRoutes {
	out := apitypes.AlarmRoutes{Routes: make([]apitypes.AlarmRoute, 0, len(routes))}
	for _, r := range routes {
		out.Routes = append(out.Routes, apitypes.AlarmRoute{Channel: r.Channel, Recipient: r.Recipient})
	}
	return out
}

// AlarmRoutes returns the alarm routes of job id.
func (s *Service) AlarmRoutes(ctx context.Context, a Actor, id int64) (apitypes.AlarmRoutes, error) {
	j, err := s.StoredJob(ctx, a, id)
	if err != nil {
		return apitypes.AlarmRoutes{}, err
	}
	routes, err := s.st.AlarmRoutes(ctx, j.ID)
	if err != nil {
		return apitypes.AlarmRoutes{}, err
	}
	return alarmRoutesWire(routes), nil
}

// SetAlarmRoutes replaces the alarm routes of job id (routes nil:
// ErrInvalid, routes is required): each of a configured channel, a
// recipient an email address for a channel that takes them, no route
// twice, at most 50.
func (s *Service) SetAlarmRoutes(ctx context.Context, a Actor, id int64, routes *[]apitypes.AlarmRoute) (apitypes.AlarmRoutes, error) {
	j, err := s.StoredJob(ctx, a, id)
	if err != nil {
		return apitypes.AlarmRoutes{}, err
	}
	if routes == nil {
		return apitypes.AlarmRoutes{}, refuse(ErrInvalid, "routes is required", map[string]msg.Msg{"routes": msg.New(msg.RoutesRequired)})
	}
	rows := make([]store.AlarmRoute, 0, len(*routes))
	for _, r := range *routes {
		rows = append(rows, store.AlarmRoute{Channel: r.Channel, Recipient: r.Recipient})
	}
	if fields := s.checkAlarmRoutes(rows); len(fields) > 0 {
		return apitypes.AlarmRoutes{}, refuse(ErrInvalid, "invalid alarm routes", fields)
	}
	before, err := s.st.AlarmRoutes(ctx, j.ID)
	if err != nil {
		return apitypes.AlarmRoutes{}, err
	}
	if err := s.st.SetAlarmRoutes(ctx, j.ID, rows); err != nil {
		return apitypes.AlarmRoutes{}, err
	}
	after, err := s.st.AlarmRoutes(ctx, j.ID)
	if err != nil {
		return apitypes.AlarmRoutes{}, err
	}
	s.audit(ctx, a, j.App, "job.alarm_routes", jobObject(j.ID), map[string]any{"before": before, "after": after})
	return alarmRoutesWire(after), nil
}

// checkAlarmRoutes returns a message per invalid field ("routes[2].channel").
func (s *Service) checkAlarmRoutes(routes []store.AlarmRoute) map[string]msg.Msg {
	fields := map[string]msg.Msg{}
	if len(routes) > maxAlarmRoutes {
		fields["routes"] = msg.New(msg.RoutesMax, "max", maxAlarmRoutes)
		return fields
	}
	channels := s.cfg.AlarmChannels
	seen := map[store.AlarmRoute]int{}
	for i, r := range routes {
		at := "routes[" + strconv.Itoa(i) + "]"
		exists, email := false, false
		if channels != nil {
			exists, email = channels.AlarmChannel(r.Channel)
		}
		switch {
		case r.Channel == "":
			fields[at+".channel"] = msg.New(msg.RouteChannelRequired)
		case channels == nil:
			fields[at+".channel"] = msg.New(msg.RouteNoChannels)
		case !exists:
			fields[at+".channel"] = msg.New(msg.RouteUnknownChannel, "channel", strconv.Quote(r.Channel))
		}
		if r.Recipient != "" {
			if ad, err := mail.ParseAddress(r.Recipient); err != nil || ad.Address != r.Recipient || len(r.Recipient) > 254 {
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

// TestAlarmChannel sends a test message through channel name now; admins
// only. An unknown channel (or none configured) is ErrNotFound; the
// attempt is audited either way. A failed delivery is returned as the
// channel's error (not a refusal).
func (s *Service) TestAlarmChannel(ctx context.Context, a Actor, name string) (apitypes.AlarmChannelTest, error) {
	if err := needRole(a, auth.RoleAdmin); err != nil {
		return apitypes.AlarmChannelTest{}, err
	}
	channels := s.cfg.AlarmChannels
	if channels == nil {
		return apitypes.AlarmChannelTest{}, refuse(ErrNotFound, "no alarm channels are configured on this admin (--alarm-channels)", nil)
	}
	if exists, _ := channels.AlarmChannel(name); !exists {
		return apitypes.AlarmChannelTest{}, refuse(ErrNotFound, "no alarm channel named "+strconv.Quote(name)+" is configured", nil)
	}
	err := channels.SendTest(ctx, name, a.User.Username)
	s.audit(ctx, a, noApp, "alarm_channel.test", "alarm-channel/"+name, map[string]any{"ok": err == nil})
	if err != nil {
		s.log.Warn("alarm channel test failed", "channel", name, "err", err)
		return apitypes.AlarmChannelTest{}, err
	}
	return apitypes.AlarmChannelTest{Sent: true, Channel: name}, nil
}
