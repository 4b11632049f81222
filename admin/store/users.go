package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"
)

// CountUsers returns the number of console users.
func (s *Store) CountUsers(ctx context.Context) (int, error) {
	n, err := s.q.UserCount(ctx, s.db)
	if err != nil {
		return 0, fmt.Errorf("count users: %w", err)
	}
	return n, nil
}

// CreateUser inserts a user; a taken name is ErrConflict.
func (s *Store) CreateUser(ctx context.Context, username, passwordHash, role string) (int64, error) {
	id, err := s.q.UserInsert(ctx, s.db, userInsertParams{Username: username, PasswordHash: passwordHash, Role: role})
	if isDuplicate(err) {
		return 0, conflictf("user %q already exists", username)
	}
	if err != nil {
		return 0, fmt.Errorf("create user %q: %w", username, err)
	}
	return id, nil
}

// UserByName returns a user or ErrNotFound. User names are
// case-insensitive (migration 0014: a case-insensitive collation on MySQL,
// COLLATE NOCASE on SQLite): "Alice" finds "alice", and u.Username is the
// name as stored.
func (s *Store) UserByName(ctx context.Context, username string) (User, error) {
	u, err := s.q.UserByName(ctx, s.db, username)
	if err != nil {
		return u, notFound(err, "user "+username)
	}
	if !strings.EqualFold(u.Username, username) {
		// MySQL's PAD SPACE collations also match "alice " to "alice";
		// SQLite does not. Both dialects answer the same.
		return User{}, fmt.Errorf("user %s: %w", username, ErrNotFound)
	}
	return u, nil
}

// User returns a user or ErrNotFound.
func (s *Store) User(ctx context.Context, id int64) (User, error) {
	u, err := s.q.UserByID(ctx, s.db, id)
	if err != nil {
		return u, notFound(err, fmt.Sprintf("user %d", id))
	}
	return u, nil
}

// CreateSession stores a session by the hash of its token, expiring ttl
// after the database clock's now (SessionUser compares with that clock).
func (s *Store) CreateSession(ctx context.Context, tokenHash string, userID int64, ttl time.Duration) error {
	if _, err := s.q.SessionInsert(ctx, s.db, sessionInsertParams{TokenHash: tokenHash, UserID: userID, ExpiresAfterMS: ttl.Milliseconds()}); err != nil {
		return fmt.Errorf("create session: %w", err)
	}
	return nil
}

// SessionUser returns the user of an unexpired session, or ErrNotFound.
func (s *Store) SessionUser(ctx context.Context, tokenHash string) (User, error) {
	id, err := s.q.SessionGet(ctx, s.db, tokenHash)
	if err != nil {
		return User{}, notFound(err, "session")
	}
	return s.User(ctx, id)
}

// DeleteSession removes a session (logout).
func (s *Store) DeleteSession(ctx context.Context, tokenHash string) error {
	_, err := s.q.SessionDelete(ctx, s.db, tokenHash)
	return err
}

// PurgeSessions deletes expired console sessions (database clock) and
// returns how many.
func (s *Store) PurgeSessions(ctx context.Context) (int64, error) {
	n, err := s.q.SessionPurge(ctx, s.db)
	if err != nil {
		return 0, fmt.Errorf("purge expired sessions: %w", err)
	}
	return n, nil
}

// Audit records a change: e.Actor, e.Action, e.Object, e.Detail, and who
// may read it (e.App, e.OwnerID; see AuditEntry). ID and At are ignored:
// the database assigns them.
func (s *Store) Audit(ctx context.Context, e AuditEntry) error {
	if _, err := s.q.AuditInsert(ctx, s.db, auditInsertParams{
		Actor: truncate(e.Actor, 64), Action: e.Action, Object: truncate(e.Object, 255), Detail: e.Detail,
		App: e.App, OwnerID: e.OwnerID, TokenID: e.APIKeyID,
	}); err != nil {
		return fmt.Errorf("write audit log: %w", err)
	}
	return nil
}

// Users lists console users by name.
func (s *Store) Users(ctx context.Context) ([]User, error) {
	out, err := s.q.UserList(ctx, s.db)
	if err != nil {
		return nil, fmt.Errorf("list users: %w", err)
	}
	return out, nil
}

// SetUserApps limits a user to apps ("" or nil: every app).
func (s *Store) SetUserApps(ctx context.Context, id int64, apps []string) error {
	n, err := s.q.UserSetApps(ctx, s.db, userSetAppsParams{Apps: strings.Join(apps, ","), ID: id})
	return oneRow(n, err, fmt.Sprintf("user %d", id))
}

// SetUserRole changes a user's role.
func (s *Store) SetUserRole(ctx context.Context, id int64, role string) error {
	n, err := s.q.UserSetRole(ctx, s.db, userSetRoleParams{Role: role, ID: id})
	return oneRow(n, err, fmt.Sprintf("user %d", id))
}

// SetUserPassword replaces a user's password hash and ends their sessions.
func (s *Store) SetUserPassword(ctx context.Context, id int64, hash string) error {
	n, err := s.q.UserSetPassword(ctx, s.db, userSetPasswordParams{PasswordHash: hash, ID: id})
	if err := oneRow(n, err, fmt.Sprintf("user %d", id)); err != nil {
		return err
	}
	_, err = s.q.SessionDeleteUser(ctx, s.db, id)
	return err
}

// DeleteUser removes a user and their sessions.
func (s *Store) DeleteUser(ctx context.Context, id int64) error {
	n, err := s.q.UserDelete(ctx, s.db, id)
	if err := oneRow(n, err, fmt.Sprintf("user %d", id)); err != nil {
		return err
	}
	_, err = s.q.SessionDeleteUser(ctx, s.db, id)
	return err
}

// oneRow is the error of an update of one row (what) that affected n
// rows: err, or ErrNotFound when it changed none.
func oneRow(n int64, err error, what string) error {
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if n == 0 {
		return fmt.Errorf("%s: %w", what, ErrNotFound)
	}
	return nil
}

// AuditEntry is one change.
type AuditEntry struct {
	ID     int64  `db:"id"`
	At     int64  `db:"at"`
	Actor  string `db:"actor"`
	Action string `db:"action"`
	Object string `db:"object"`
	Detail string `db:"detail"`
	// App is the app of the object the entry is about (a job, run,
	// executor or slot attempt): the users of that app may read it. ""
	// for entries about users, tokens and the platform: admins only.
	App string `db:"app"`
	// OwnerID is the user whose own account the entry is about (their
	// login, password change, or one of their API tokens created or
	// revoked, by them or by an admin): that user may read it too. 0: none.
	OwnerID int64 `db:"owner_id"`
	// APIKeyID is the API token the actor acted with (not set for a console
	// session or a login); APIKeyName comes with it when read.
	APIKeyID   sql.NullInt64 `db:"token_id"`
	APIKeyName string        `db:"token_name"`
}

// AuditFilter narrows the audit log. Zero fields do not filter.
type AuditFilter struct {
	Actor  string // the user name, exactly (case as stored)
	Action string // a prefix: "token." or "job.update"
	Object string // a prefix: "job/5", "user/"
	From   int64  // at >= From (Unix ms)
	To     int64  // at < To (Unix ms)
}

// likePrefix is a LIKE pattern matching what starts with p, '!' escaping
// the pattern characters of p.
func likePrefix(p string) string {
	return strings.NewReplacer("!", "!!", "%", "!%", "_", "!_").Replace(p) + "%"
}

// AuditScope is what one reader may see of the audit log: everything
// (All: admins), or the entries of the apps Apps (nil: of every app) and
// those about the account OwnerID.
type AuditScope struct {
	All     bool
	Apps    []string
	OwnerID int64
}

// AuditLog lists the entries scope may see that pass f, newest first, with
// id < beforeID (0: from the newest), at most limit.
func (s *Store) AuditLog(ctx context.Context, beforeID int64, limit int, scope AuditScope, f AuditFilter) ([]AuditEntry, error) {
	if beforeID <= 0 {
		beforeID = 1<<63 - 1
	}
	to := f.To
	if to <= 0 {
		to = 1<<63 - 1
	}
	out, err := s.q.AuditList(ctx, s.db, auditListParams{
		ID: beforeID, All: scope.All, AllApps: scope.Apps == nil, Apps: orNone(scope.Apps), OwnerID: scope.OwnerID,
		Actor: f.Actor, Action: likePrefix(f.Action), Object: likePrefix(f.Object), From: f.From, To: to, Limit: limit,
	})
	if err != nil {
		return nil, fmt.Errorf("audit log: %w", err)
	}
	return out, nil
}

// orNone returns apps for an "app IN (?)" list, which sqlx.In cannot expand
// from an empty slice: [""] matches no app (no object has app "").
func orNone(apps []string) []string {
	if len(apps) == 0 {
		return []string{""}
	}
	return apps
}
