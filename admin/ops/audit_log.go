package ops

import (
	"context"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/auth"
	"github.com/shardjob/shardjob/admin/store"
)

// Bounds of a page of the audit log.
const (
	auditPage      = 100
	maxAuditPage   = 500
	maxAuditFilter = 255
)

// auditScope is what u may read of the audit log: admins everything;
// others the entries of their apps (of every app when they have no limit)
// and those about their own account (logins, password, API keys).
// Entries about users, roles, other users' API keys and the platform are
// for admins only, whatever the app limit.
func auditScope(u store.User) store.AuditScope {
	if auth.Allows(u.Role, auth.RoleAdmin) {
		return store.AuditScope{All: true}
	}
	return store.AuditScope{Apps: u.AppList(), OwnerID: u.ID}
}

// AuditLog returns a page of the audit log entries the actor may read,
// newest first (auditScope). A limit out of 1-500 is 100.
func (s *Service) AuditLog(ctx context.Context, a Actor, q apitypes.AuditQuery) (apitypes.AuditPage, error) {
	if q.Limit <= 0 || q.Limit > maxAuditPage {
		q.Limit = auditPage
	}
	f := store.AuditFilter{Actor: q.Actor, Action: q.Action, Object: q.Object}
	for name, v := range map[string]string{"actor": f.Actor, "action": f.Action, "object": f.Object} {
		if len(v) > maxAuditFilter {
			return apitypes.AuditPage{}, refuse(ErrInvalid, name+" is longer than 255 bytes: give a user name, an action prefix (token.) or an object prefix (job/5)", nil)
		}
	}
	if q.From != nil {
		f.From = q.From.UnixMilli()
	}
	if q.To != nil {
		f.To = q.To.UnixMilli()
	}
	entries, err := s.st.AuditLog(ctx, q.Before, q.Limit, auditScope(a.User), f)
	if err != nil {
		return apitypes.AuditPage{}, err
	}
	out := apitypes.AuditPage{Entries: make([]apitypes.AuditView, 0, len(entries))}
	for _, e := range entries {
		v := apitypes.AuditView{ID: e.ID, At: msTime(e.At), Actor: e.Actor, Action: e.Action, Object: e.Object, Detail: e.Detail, App: e.App, APIKeyName: e.APIKeyName}
		if e.APIKeyID.Valid {
			id := e.APIKeyID.Int64
			v.APIKeyID = &id
		}
		out.Entries = append(out.Entries, v)
	}
	if len(entries) == q.Limit {
		next := entries[len(entries)-1].ID
		out.NextBefore = &next
	}
	return out, nil
}
