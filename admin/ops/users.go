package ops

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/auth"
	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/sdk/names"
)

// noApp is the app of audit entries about users and the platform: only
// admins read them.
const noApp = ""

// maxUserApps bounds the apps of a user, written comma separated.
const maxUserApps = 2000

func userObject(name string) string { return "user/" + name }

// AppsOf lists the apps a user is limited to ([] for every app).
func AppsOf(u store.User) []string {
	if u.Apps == "" {
		return []string{}
	}
	return strings.Split(u.Apps, ",")
}

func userView(u store.User) apitypes.UserView {
	source := u.Source
	if source == "" {
		source = "local"
	}
	return apitypes.UserView{ID: u.ID, Username: u.Username, Role: u.Role, Apps: AppsOf(u), CreatedAt: msTime(u.CreatedAt),
		Source: source, Email: u.Email, Refused: u.Refused}
}

// needRole refuses (ErrForbidden) an actor whose role is below role; the
// same answer as admin/api's route guard, which checks it first.
func needRole(a Actor, role string) error {
	if auth.Allows(a.User.Role, role) {
		return nil
	}
	return refuse(ErrForbidden, "role "+a.User.Role+" may not do this; it needs "+role, nil)
}

// checkApps checks the list of apps of a user: valid names, no repeat,
// 2000 bytes at most written comma separated.
func checkApps(apps []string) error {
	seen := map[string]bool{}
	for _, a := range apps {
		if !names.Valid(a) || seen[a] {
			return refuse(ErrInvalid, "invalid apps", map[string]msg.Msg{"apps": msg.New(msg.UserAppsInvalid, "rule", msg.New(msg.NameRule), "value", strconv.Quote(a))})
		}
		seen[a] = true
	}
	if len(strings.Join(apps, ",")) > maxUserApps {
		return refuse(ErrInvalid, "invalid apps", map[string]msg.Msg{"apps": msg.New(msg.UserAppsTooLong, "max", maxUserApps)})
	}
	return nil
}

func checkRole(role string) error {
	if auth.ValidRole(role) {
		return nil
	}
	return refuse(ErrInvalid, "unknown role", map[string]msg.Msg{"role": msg.New(msg.RoleOneOf)})
}

// CheckPassword is the password policy for a new password sent as field:
// an ErrInvalid naming the field with the policy's reason, or nil.
func CheckPassword(field, pw string) error {
	return passwordRefusal(field, auth.ValidatePassword(pw))
}

// passwordRefusal is a refusal of the password policy as an ErrInvalid
// naming field; other errors pass.
func passwordRefusal(field string, err error) error {
	var pe *auth.PasswordError
	if errors.As(err, &pe) {
		return refuse(ErrInvalid, pe.Error(), map[string]msg.Msg{field: msg.Of(pe)})
	}
	return err
}

// hashPassword hashes a new password sent as field.
func hashPassword(field, pw string) (string, error) {
	hash, err := auth.HashPassword(pw)
	return hash, passwordRefusal(field, err)
}

// Users lists the users; admins only.
func (s *Service) Users(ctx context.Context, a Actor) (apitypes.UserList, error) {
	if err := needRole(a, auth.RoleAdmin); err != nil {
		return apitypes.UserList{}, err
	}
	users, err := s.st.Users(ctx)
	if err != nil {
		return apitypes.UserList{}, err
	}
	out := apitypes.UserList{Users: make([]apitypes.UserView, 0, len(users))}
	for _, u := range users {
		out.Users = append(out.Users, userView(u))
	}
	return out, nil
}

// CreateUser creates a user; admins only. A user name is unique without
// regard to case: a taken one is ErrConflict naming the user that has it.
func (s *Service) CreateUser(ctx context.Context, a Actor, req apitypes.UserRequest) (apitypes.UserView, error) {
	if err := needRole(a, auth.RoleAdmin); err != nil {
		return apitypes.UserView{}, err
	}
	if !names.Valid(req.Username) {
		return apitypes.UserView{}, refuse(ErrInvalid, "invalid user name", map[string]msg.Msg{"username": msg.New(msg.NameRule)})
	}
	if err := checkRole(req.Role); err != nil {
		return apitypes.UserView{}, err
	}
	if err := checkApps(req.Apps); err != nil {
		return apitypes.UserView{}, err
	}
	hash, err := hashPassword("password", req.Password)
	if err != nil {
		return apitypes.UserView{}, err
	}
	id, err := s.st.CreateUser(ctx, req.Username, hash, req.Role)
	if errors.Is(err, store.ErrConflict) {
		// User names are case-insensitive: name the user that has it.
		taken := req.Username
		if other, err := s.st.UserByName(ctx, req.Username); err == nil {
			taken = other.Username
		}
		return apitypes.UserView{}, refuse(ErrConflict,
			"user name "+req.Username+" is taken by the user "+taken+" (user names are case-insensitive); choose another name",
			map[string]msg.Msg{"username": msg.New(msg.UserNameTaken, "user", taken)})
	}
	if err != nil {
		return apitypes.UserView{}, err
	}
	if len(req.Apps) > 0 {
		if err := s.st.SetUserApps(ctx, id, req.Apps); err != nil {
			return apitypes.UserView{}, err
		}
	}
	u, err := s.st.User(ctx, id)
	if err != nil {
		return apitypes.UserView{}, err
	}
	s.audit(ctx, a, noApp, "user.create", userObject(u.Username), map[string]any{"role": u.Role, "apps": AppsOf(u)})
	return userView(u), nil
}

// UpdateUser changes the fields of req that are set; admins only. Every
// field is checked before any is written: a refused update changes
// nothing. An admin cannot take the admin role from themselves.
func (s *Service) UpdateUser(ctx context.Context, a Actor, id int64, req apitypes.UserUpdate) (apitypes.UserView, error) {
	if err := needRole(a, auth.RoleAdmin); err != nil {
		return apitypes.UserView{}, err
	}
	u, err := s.st.User(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return apitypes.UserView{}, notFound("user", id)
	}
	if err != nil {
		return apitypes.UserView{}, err
	}
	if isDirectoryUser(u) && (req.Role != nil || req.Apps != nil || req.Password != nil) {
		return apitypes.UserView{}, refuse(ErrConflict, "user "+u.Username+" signs in through "+u.Source+": their role and apps come from the SSO mapping of their groups and they have no password here; change their groups in the directory or the mapping (--sso-config)", nil)
	}
	if req.Role != nil {
		if err := checkRole(*req.Role); err != nil {
			return apitypes.UserView{}, err
		}
		if u.ID == a.User.ID && *req.Role != auth.RoleAdmin {
			return apitypes.UserView{}, refuse(ErrConflict, "you cannot take the admin role from yourself; ask another admin", nil)
		}
	}
	if req.Apps != nil {
		if err := checkApps(*req.Apps); err != nil {
			return apitypes.UserView{}, err
		}
	}
	var hash string
	if req.Password != nil {
		if hash, err = hashPassword("password", *req.Password); err != nil {
			return apitypes.UserView{}, err
		}
	}
	if req.Role != nil {
		if err := s.st.SetUserRole(ctx, id, *req.Role); err != nil {
			return apitypes.UserView{}, err
		}
	}
	if req.Apps != nil {
		if err := s.st.SetUserApps(ctx, id, *req.Apps); err != nil {
			return apitypes.UserView{}, err
		}
	}
	if req.Password != nil {
		if err := s.st.SetUserPassword(ctx, id, hash); err != nil {
			return apitypes.UserView{}, err
		}
		s.ForgetInitialPassword(u.Username)
	}
	before := u
	u, _ = s.st.User(ctx, id)
	s.audit(ctx, a, noApp, "user.update", userObject(u.Username), map[string]any{"before": map[string]any{"role": before.Role, "apps": AppsOf(before)},
		"after": map[string]any{"role": u.Role, "apps": AppsOf(u)}, "password_changed": req.Password != nil})
	return userView(u), nil
}

// isDirectoryUser reports whether u signs in through a directory (OIDC,
// LDAP) rather than with a password here.
func isDirectoryUser(u store.User) bool { return u.Source != "" && u.Source != "local" }

// DeleteUser deletes a user; admins only, and not themselves.
func (s *Service) DeleteUser(ctx context.Context, a Actor, id int64) error {
	if err := needRole(a, auth.RoleAdmin); err != nil {
		return err
	}
	if id == a.User.ID {
		return refuse(ErrConflict, "you cannot delete yourself; ask another admin", nil)
	}
	u, err := s.st.User(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return notFound("user", id)
	}
	if err != nil {
		return err
	}
	if err := s.st.DeleteUser(ctx, id); err != nil {
		return err
	}
	s.audit(ctx, a, noApp, "user.delete", userObject(u.Username), nil)
	return nil
}

// WrongPasswordField is the field of the ErrInvalid refusal when the current
// password of a change of one's own password is wrong (admin/api counts
// these against its throttle).
const WrongPasswordField = "old"

// ChangeOwnPassword sets the actor's password to req.New when req.Old is
// their current one (else ErrInvalid naming field "old"); every session of
// the user ends (the store's SetUserPassword).
func (s *Service) ChangeOwnPassword(ctx context.Context, a Actor, req apitypes.PasswordChange) error {
	if isDirectoryUser(a.User) {
		return refuse(ErrConflict, "you sign in through "+a.User.Source+": change your password there", nil)
	}
	if err := CheckPassword("new", req.New); err != nil {
		return err
	}
	if !auth.CheckPassword(a.User.PasswordHash, req.Old) {
		return refuse(ErrInvalid, "current password is wrong", map[string]msg.Msg{WrongPasswordField: msg.New(msg.PasswordWrongOld)})
	}
	hash, err := hashPassword("new", req.New)
	if err != nil {
		return err
	}
	if err := s.st.SetUserPassword(ctx, a.User.ID, hash); err != nil {
		return err
	}
	s.ForgetInitialPassword(a.User.Username)
	s.auditAccount(ctx, a, a.User.ID, "user.password", userObject(a.User.Username), nil)
	return nil
}

// ForgetInitialPassword removes the file holding the first-start password
// (Config.InitialPasswordFile) once its user has signed in or their
// password changed: it has served its purpose, and a stale copy would
// mislead.
func (s *Service) ForgetInitialPassword(username string) {
	f := s.cfg.InitialPasswordFile
	if f == "" || username != auth.BootstrapUser {
		return
	}
	if err := os.Remove(f); err != nil && !errors.Is(err, os.ErrNotExist) {
		s.log.Warn("could not remove the initial password file", "file", f, "err", err)
	}
}

// auditAccount records a change to the account of user userID (their
// password, one of their API keys): admins and that user may read it.
func (s *Service) auditAccount(ctx context.Context, a Actor, userID int64, action, object string, detail any) {
	s.Audit(ctx, a, store.AuditEntry{OwnerID: userID, Action: action, Object: object}, detail)
}
