package ops

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"log/slog"
	"strconv"
	"time"

	"github.com/shardjob/shardjob/admin/internal/clock"
	"github.com/shardjob/shardjob/admin/jobdef"
	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/runstate"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/sdk/protocol"
)

// The kinds of refusal (errors.Is tells them; see the package doc for the
// statuses admin/api answers).
var (
	ErrInvalid   = errors.New("invalid request")
	ErrForbidden = errors.New("forbidden")
	ErrNotFound  = errors.New("not found")
	ErrConflict  = errors.New("conflict")
)

// Error is a refusal of the Service.
type Error struct {
	// Kind is ErrInvalid, ErrForbidden, ErrNotFound or ErrConflict.
	Kind error
	// Msg says what was refused, for the client.
	Msg string
	// Fields names the request fields in error, with what is wrong with
	// each; nil when no field is.
	Fields map[string]msg.Msg
	// Object and ID name the object the refusal is about ("job", 7) when
	// Msg names it first as "job 7" (an ErrNotFound, a run's status that
	// refuses an action): admin/api writes the id as the request wrote it.
	Object string
	ID     int64
}

func (e *Error) Error() string { return e.Msg }

// Unwrap is the Kind.
func (e *Error) Unwrap() error { return e.Kind }

func refuse(kind error, text string, fields map[string]msg.Msg) error {
	return &Error{Kind: kind, Msg: text, Fields: fields}
}

// refuseField refuses with the text of a field error: m in English.
func refuseField(kind error, field string, m msg.Msg) error {
	return refuse(kind, m.String(), map[string]msg.Msg{field: m})
}

func notFound(object string, id int64) error {
	return &Error{Kind: ErrNotFound, Msg: object + " " + strconv.FormatInt(id, 10) + " does not exist", Object: object, ID: id}
}

// fieldErrors turns the field errors of validation (jobdef.FieldMsgs) into
// an ErrInvalid with the same text; other errors pass.
func fieldErrors(err error) error {
	var fe jobdef.FieldMsgs
	if errors.As(err, &fe) {
		return refuse(ErrInvalid, fe.Error(), fe)
	}
	return err
}

// Actor is who asks for an operation.
type Actor struct {
	// User is the signed-in user: their name, role and apps.
	User store.User
	// APIKeyID is the API key the user acts with; 0 for a console session.
	APIKeyID int64
}

// Waker nudges the scheduler (scheduler.Scheduler).
type Waker interface{ Wake() }

// Canceller stops the attempts of a cancelled run on their executors
// (dispatch.Client).
type Canceller interface {
	Cancel(ctx context.Context, baseURL string, req protocol.CancelRequest) error
}

// Config of the Service.
type Config struct {
	// Store is the platform database. Required.
	Store *store.Store
	// Scheduler is woken after jobs change and after a retry; optional.
	Scheduler Waker
	// Canceller pushes cancellations to executors; optional: without it
	// executors learn of a cancellation in their next heartbeat response.
	Canceller Canceller
	// Clock tells the time of validation, next firings and manual
	// triggers. Default clock.System.
	Clock clock.Clock
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// Workflows, the workflow engine (admin/workflowrun), is woken after a
	// workflow run is created (a trigger, a backfill) or rerun; optional:
	// without it the engine finds them at its next tick.
	Workflows Waker
	// InitialPasswordFile is where the first start wrote the generated
	// password of user "admin": removed at that user's first login or
	// password change (ForgetInitialPassword). Optional.
	InitialPasswordFile string
	// AlarmChannels validates alarm routes and tests channels; optional:
	// without them routes cannot be set and channels cannot be tested.
	AlarmChannels AlarmChannels
	// SampleInterval is how often the leader records utilization samples:
	// a bucket of Utilization is at least twice as wide. Default 30s.
	SampleInterval time.Duration
	// XXLJob logs and kills attempts on XXL-JOB executors; optional:
	// without it XXLJobLog and XXLJobKill answer that XXL-JOB support is
	// not enabled.
	XXLJob XXLJob
	// SSO is single sign-on (signin.go); nil: local users only.
	SSO *Directories
}

// Service runs the operator API's operations once the request is
// authenticated and decoded. It is safe for concurrent use.
type Service struct {
	cfg  Config
	st   *store.Store
	runs *runstate.Machine // cancels and retries runs
	log  *slog.Logger
}

// New returns a Service.
func New(cfg Config) *Service {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.System
	}
	if cfg.SampleInterval <= 0 {
		cfg.SampleInterval = 30 * time.Second
	}
	return &Service{cfg: cfg, st: cfg.Store, runs: runstate.New(cfg.Store), log: cfg.Logger}
}

func (s *Service) wake() {
	if s.cfg.Scheduler != nil {
		s.cfg.Scheduler.Wake()
	}
}

// Audit records a change that a made, e with detail as its JSON. App set:
// the users of that app may read the entry; OwnerID set: that user may;
// neither: only admins. A failed write is logged, not returned: the change
// is made.
func (s *Service) Audit(ctx context.Context, a Actor, e store.AuditEntry, detail any) {
	b, _ := json.Marshal(detail)
	e.Actor, e.Detail = a.User.Username, string(b)
	if a.APIKeyID != 0 {
		e.APIKeyID = sql.NullInt64{Int64: a.APIKeyID, Valid: true}
	}
	if err := s.st.Audit(ctx, e); err != nil {
		s.log.Error("audit log write failed", "action", e.Action, "object", e.Object, "err", err)
	}
}

// audit records a change to an object of app.
func (s *Service) audit(ctx context.Context, a Actor, app, action, object string, detail any) {
	s.Audit(ctx, a, store.AuditEntry{App: app, Action: action, Object: object}, detail)
}
