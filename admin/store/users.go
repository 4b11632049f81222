package store

import (
	"context"
	"fmt"
	"time"
)

// CountUsers returns the number of console users.
func (s *Store) CountUsers(ctx context.Context) (int, error) {
	var n int
	if err := s.db.GetContext(ctx, &n, s.q.get("UserCount")); err != nil {
		return 0, fmt.Errorf("count users: %w", err)
	}
	return n, nil
}

// CreateUser inserts a user; a taken name is ErrConflict.
func (s *Store) CreateUser(ctx context.Context, username, passwordHash, role string) (int64, error) {
	res, err := s.db.ExecContext(ctx, s.q.get("UserInsert"), username, passwordHash, role)
	if isDuplicate(err) {
		return 0, fmt.Errorf("user %q: %w", username, ErrConflict)
	}
	if err != nil {
		return 0, fmt.Errorf("create user %q: %w", username, err)
	}
	return res.LastInsertId()
}

// UserByName returns a user or ErrNotFound.
func (s *Store) UserByName(ctx context.Context, username string) (User, error) {
	var u User
	if err := s.db.GetContext(ctx, &u, s.q.get("UserByName"), username); err != nil {
		return u, notFound(err, "user "+username)
	}
	return u, nil
}

// UserByID returns a user or ErrNotFound.
func (s *Store) UserByID(ctx context.Context, id int64) (User, error) {
	var u User
	if err := s.db.GetContext(ctx, &u, s.q.get("UserByID"), id); err != nil {
		return u, notFound(err, fmt.Sprintf("user %d", id))
	}
	return u, nil
}

// CreateSession stores a session by the hash of its token.
func (s *Store) CreateSession(ctx context.Context, tokenHash string, userID int64, expires time.Time) error {
	if _, err := s.db.ExecContext(ctx, s.q.get("SessionInsert"), tokenHash, userID, ms(expires)); err != nil {
		return fmt.Errorf("create session: %w", err)
	}
	return nil
}

// SessionUser returns the user of an unexpired session, or ErrNotFound.
func (s *Store) SessionUser(ctx context.Context, tokenHash string) (User, error) {
	var id int64
	if err := s.db.GetContext(ctx, &id, s.q.get("SessionGet"), tokenHash); err != nil {
		return User{}, notFound(err, "session")
	}
	return s.UserByID(ctx, id)
}

// DeleteSession removes a session (logout).
func (s *Store) DeleteSession(ctx context.Context, tokenHash string) error {
	_, err := s.db.ExecContext(ctx, s.q.get("SessionDelete"), tokenHash)
	return err
}

// Audit records a change made by actor.
func (s *Store) Audit(ctx context.Context, actor, action, object, detail string) error {
	if _, err := s.db.ExecContext(ctx, s.q.get("AuditInsert"), actor, action, object, detail); err != nil {
		return fmt.Errorf("write audit log: %w", err)
	}
	return nil
}
