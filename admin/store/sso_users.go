package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
)

// SSOUser is what a sign-in through a directory writes of a user
// (admin/sso): who they are there and what the mapping gave them.
type SSOUser struct {
	Source, Subject, Username, Email string
	Role                             string
	Apps                             []string // nil: every app
	// CheckedAt is when the directory answered (Unix ms).
	CheckedAt int64
	// RefreshToken is the sealed OIDC refresh token to recheck the user
	// with; empty: keep the one stored (or none).
	RefreshToken string
}

func nullString(s string) sql.NullString { return sql.NullString{String: s, Valid: s != ""} }

// UserBySubject returns the directory user of source and subject, or
// ErrNotFound.
func (s *Store) UserBySubject(ctx context.Context, source, subject string) (User, error) {
	u, err := s.q.UserBySubject(ctx, s.db, userBySubjectParams{Source: source, Subject: subject})
	if err != nil {
		return u, notFound(err, source+" user "+subject)
	}
	return u, nil
}

// CreateSSOUser inserts a directory user at their first sign-in; a user
// name another user holds is ErrConflict.
func (s *Store) CreateSSOUser(ctx context.Context, u SSOUser) (int64, error) {
	id, err := s.q.UserInsertSSO(ctx, s.db, userInsertSSOParams{
		Username: u.Username, Role: u.Role, Apps: strings.Join(u.Apps, ","), Source: u.Source, Subject: u.Subject,
		Email: u.Email, CheckedAt: u.CheckedAt, RefreshToken: nullString(u.RefreshToken),
	})
	if isDuplicate(err) {
		return 0, conflictf("user name %q is taken by another user", u.Username)
	}
	if err != nil {
		return 0, fmt.Errorf("create %s user %q: %w", u.Source, u.Username, err)
	}
	return id, nil
}

// ApplySSOUser writes what the directory says now of user id: name,
// e-mail, role, apps, when it answered, and clears a refusal. A user name
// another user holds is ErrConflict.
func (s *Store) ApplySSOUser(ctx context.Context, id int64, u SSOUser) error {
	n, err := s.q.UserApplySSO(ctx, s.db, userApplySSOParams{
		Username: u.Username, Role: u.Role, Apps: strings.Join(u.Apps, ","), Email: u.Email, CheckedAt: u.CheckedAt,
		RefreshToken: nullString(u.RefreshToken), ID: id,
	})
	if isDuplicate(err) {
		return conflictf("user name %q is taken by another user", u.Username)
	}
	return oneRow(n, err, fmt.Sprintf("user %d", id))
}

// ClaimRecheck lets one request ask the directory about user u: it moves
// the user's recheck_at from what u read to now and reports whether this
// call did (another request, of this admin or another, may have first).
func (s *Store) ClaimRecheck(ctx context.Context, u User, now time.Time) (bool, error) {
	n, err := s.q.UserClaimRecheck(ctx, s.db, userClaimRecheckParams{Started: now.UnixMilli(), ID: u.ID, RecheckAt: u.RecheckAt})
	if err != nil {
		return false, fmt.Errorf("claim the recheck of user %d: %w", u.ID, err)
	}
	return n == 1, nil
}

// RefuseUser marks a directory user refused for reason, forgets their
// refresh token and ends their sessions; their API keys are refused while
// the mark stays (admin/api).
func (s *Store) RefuseUser(ctx context.Context, id int64, reason string) error {
	n, err := s.q.UserRefuse(ctx, s.db, userRefuseParams{Refused: truncate(reason, 255), ID: id})
	if err := oneRow(n, err, fmt.Sprintf("user %d", id)); err != nil {
		return err
	}
	_, err = s.q.SessionDeleteUser(ctx, s.db, id)
	return err
}

// UserRefreshToken returns the sealed refresh token stored for user id
// ("" when none).
func (s *Store) UserRefreshToken(ctx context.Context, id int64) (string, error) {
	t, err := s.q.UserRefreshToken(ctx, s.db, id)
	if err != nil {
		return "", notFound(err, fmt.Sprintf("user %d", id))
	}
	return t.String, nil
}

// PendingSignIn is an OIDC sign-in begun and not yet come back.
type PendingSignIn struct {
	Nonce, Verifier, ReturnTo string
}

// SavePendingSignIn stores a pending sign-in by the hash of its state for
// ttl (database clock).
func (s *Store) SavePendingSignIn(ctx context.Context, stateHash string, p PendingSignIn, ttl time.Duration) error {
	_, err := s.q.SSOLoginInsert(ctx, s.db, ssoLoginInsertParams{
		StateHash: stateHash, Nonce: p.Nonce, Verifier: p.Verifier, ReturnTo: p.ReturnTo, ExpiresAfterMS: ttl.Milliseconds(),
	})
	if err != nil {
		return fmt.Errorf("save pending sign-in: %w", err)
	}
	return nil
}

// TakePendingSignIn returns the unexpired pending sign-in of a state hash
// and deletes it, so that a state serves once: a second call, or one
// racing it, gets ErrNotFound.
func (s *Store) TakePendingSignIn(ctx context.Context, stateHash string) (PendingSignIn, error) {
	row, err := s.q.SSOLoginGet(ctx, s.db, stateHash)
	if errors.Is(err, sql.ErrNoRows) {
		return PendingSignIn{}, fmt.Errorf("pending sign-in: %w", ErrNotFound)
	}
	if err != nil {
		return PendingSignIn{}, fmt.Errorf("pending sign-in: %w", err)
	}
	n, err := s.q.SSOLoginDelete(ctx, s.db, stateHash)
	if err := oneRow(n, err, "pending sign-in"); err != nil {
		return PendingSignIn{}, err
	}
	return PendingSignIn(row), nil
}

// PurgePendingSignIns deletes the expired pending sign-ins.
func (s *Store) PurgePendingSignIns(ctx context.Context) (int64, error) {
	n, err := s.q.SSOLoginPurge(ctx, s.db)
	if err != nil {
		return 0, fmt.Errorf("purge pending sign-ins: %w", err)
	}
	return n, nil
}
