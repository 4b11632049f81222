package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/auth"
	"github.com/shardjob/shardjob/admin/coord"
	"github.com/shardjob/shardjob/admin/executorsvc"
	"github.com/shardjob/shardjob/admin/internal/clock"
	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/ops"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/admin/xxljob"
	"github.com/shardjob/shardjob/sdk/protocol"
	"github.com/shardjob/shardjob/web"
)

// Membership reports the admin replicas (coord.Elector satisfies it).
type Membership interface {
	Members(ctx context.Context) ([]coord.Member, error)
}

// Waker nudges the scheduler after a change (scheduler.Scheduler): the
// operator service's.
type Waker = ops.Waker

// Canceller stops the attempts of a cancelled run on their executors
// (dispatch.Client), the operator service's. Optional: without it
// executors learn of the cancellation in their next heartbeat response.
type Canceller = ops.Canceller

// Config of the API.
type Config struct {
	// Store is the platform database. Required.
	Store *store.Store
	// ExecutorSecret verifies executor requests. Required, no default.
	ExecutorSecret string
	// Nonces, when set, records the nonces of executor requests where every
	// admin replica sees them (store.Nonces: the platform database), so that
	// a request accepted by one replica is refused as a replay by the others.
	// Optional: without it this replica remembers the nonces it accepted in
	// memory, which is enough when it is the only replica.
	Nonces protocol.NonceStore
	// Members lists admin replicas; optional.
	Members Membership
	// Scheduler is woken after jobs change; optional.
	Scheduler Waker
	// Workflows, the workflow engine (admin/workflowrun), is woken after a
	// workflow run is triggered; optional.
	Workflows Waker
	// Canceller pushes cancellations to executors; optional.
	Canceller Canceller
	// AlarmChannels validates alarm routes and tests channels; optional.
	AlarmChannels AlarmChannels
	// Metrics serves GET /metrics (admin/metrics: Metrics.Handler); optional:
	// without it /metrics answers 404.
	Metrics http.Handler
	// Observe is middleware run first on every request (admin/metrics:
	// Metrics.Middleware, the request latency histogram); optional.
	Observe gin.HandlerFunc
	// Results sees every slot result the admin accepted (admin/metrics);
	// optional.
	Results ResultObserver
	// XXLJob serves the admin API of XXL-JOB executors and the console's
	// log and kill of their attempts (xxljob.go); optional: without it those
	// routes answer that XXL-JOB support is not enabled.
	XXLJob *xxljob.Service
	// Coordinator, when set, is reported by /readyz as the "zookeeper"
	// check: nil when this replica has a usable ZooKeeper session. It does
	// not make the replica unready: every replica serves the API and the
	// executors without ZooKeeper; only leading needs it. Optional.
	Coordinator func(ctx context.Context) error
	// RunLogs caps the handler logs stored per run (logs.go). Default
	// store.RunLogLimits defaults: 10000 lines, 8 MiB.
	RunLogs store.RunLogLimits
	// Timing is told to executors: the heartbeat period and the silence
	// after which an executor is lost (protocol.Timing: defaults 2s and 3 ×
	// Heartbeat).
	Timing protocol.Timing
	// SampleInterval is how often the leader records utilization samples
	// (server.Config.Utilization.Interval). GET /stats/utilization makes its
	// buckets at least twice as wide, so that each holds a sample. Default 30s.
	SampleInterval time.Duration
	// SessionTTL of console sessions. Default 12h.
	SessionTTL time.Duration
	// MaxBodyBytes bounds request bodies. Default 1 MiB.
	MaxBodyBytes int64
	// ManualRunsPerMinute bounds the requests that start or restart runs
	// by hand — trigger and backfill a job or a workflow, retry a run,
	// rerun a workflow run — per user and minute (an API key counts as its
	// own caller); one more is 429 with Retry-After. Default
	// DefaultManualRunsPerMinute (server: --manual-runs-per-minute).
	ManualRunsPerMinute int
	// TrustedProxies are the addresses (load balancers, reverse proxies)
	// whose X-Forwarded-For header is believed: for a request from one of
	// them the client address is the rightmost address of that header that
	// is not itself a trusted proxy. Default none: the client address is
	// always the TCP peer's, and X-Forwarded-For and X-Real-IP are ignored,
	// so that a client cannot choose its own address (the login throttle
	// counts per client address). X-Real-IP is never used: a proxy appends
	// to X-Forwarded-For, while it may pass a client's X-Real-IP through.
	TrustedProxies []netip.Prefix
	// SecureCookies sets the Secure flag on every session cookie. Default
	// false: the flag is still set for requests that came over TLS or with
	// X-Forwarded-Proto: https (a TLS-terminating proxy).
	SecureCookies bool
	// InitialPasswordFile is where the first start wrote the generated
	// password of user "admin" (server.Config.InitialPasswordFile): removed
	// at that user's first login or password change. Optional.
	InitialPasswordFile string
	// SSO is single sign-on through OIDC and LDAP (sso.go; built from
	// --sso-config); nil: local users only.
	SSO *ops.Directories
	// NoPasswordSignIn turns off the password sign-in of local users
	// (--auth-local=false), except for BreakGlassUser. Directory users
	// sign in as before.
	NoPasswordSignIn bool
	// BreakGlassUser is the one local user who may still sign in with a
	// password when NoPasswordSignIn is set (--auth-break-glass-user).
	BreakGlassUser string
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// Clock tells the time of schedule previews, validation and API key
	// checks. Default clock.System.
	Clock clock.Clock
}

// WithDefaults fills zero fields.
func (c Config) WithDefaults() Config {
	c.Timing = c.Timing.WithDefaults()
	if c.SampleInterval <= 0 {
		c.SampleInterval = 30 * time.Second
	}
	if c.SessionTTL <= 0 {
		c.SessionTTL = 12 * time.Hour
	}
	if c.ManualRunsPerMinute <= 0 {
		c.ManualRunsPerMinute = DefaultManualRunsPerMinute
	}
	if c.MaxBodyBytes <= 0 {
		c.MaxBodyBytes = 1 << 20
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Clock == nil {
		c.Clock = clock.System
	}
	return c
}

// ResultObserver sees the slot results the admin accepted, for metrics.
// SlotResult must return promptly.
type ResultObserver interface {
	SlotResult(o store.SlotOutcome)
}

// Server holds the routes.
type Server struct {
	cfg      Config
	st       *store.Store
	verifier *protocol.Verifier
	// proto handles the executor protocol's requests once signed() and
	// decodeSigned() let them through (executor.go).
	proto *executorsvc.Service
	// ops runs the operator API's operations once a handler has
	// authenticated and decoded the request.
	ops *ops.Service
	// loginThrottle counts logins per user name and client address,
	// passwordThrottle changes of one's own password per user.
	loginThrottle, passwordThrottle *auth.Throttle
	// manualRuns counts the requests that start runs by hand, per caller
	// (limitManualRuns).
	manualRuns *auth.Throttle
	log        *slog.Logger
}

// DefaultManualRunsPerMinute is Config.ManualRunsPerMinute's default.
const DefaultManualRunsPerMinute = 60

// Attempts allowed per key and window by the login and password throttles.
const (
	throttleMax    = 5
	throttleWindow = time.Minute
)

// New builds the HTTP handler.
func New(cfg Config) (http.Handler, error) {
	cfg = cfg.WithDefaults()
	if cfg.Store == nil {
		return nil, errors.New("api: Config.Store is required")
	}
	if err := protocol.ValidateSecret(cfg.ExecutorSecret); err != nil {
		return nil, fmt.Errorf("api: executor secret: %w", err)
	}
	s := &Server{
		cfg: cfg, st: cfg.Store, log: cfg.Logger,
		verifier:         protocol.NewVerifier(cfg.ExecutorSecret, 30*time.Second, cfg.Clock.Now),
		loginThrottle:    auth.NewThrottle(throttleMax, throttleWindow, cfg.Clock),
		passwordThrottle: auth.NewThrottle(throttleMax, throttleWindow, cfg.Clock),
		manualRuns:       auth.NewThrottle(cfg.ManualRunsPerMinute, time.Minute, cfg.Clock),
	}
	s.proto = executorsvc.New(executorsvc.Config{
		Store: cfg.Store, Scheduler: cfg.Scheduler, Results: cfg.Results, RunLogs: cfg.RunLogs,
		Timing: cfg.Timing, Logger: cfg.Logger,
	})
	oc := ops.Config{Store: cfg.Store, Scheduler: cfg.Scheduler, Canceller: cfg.Canceller, Clock: cfg.Clock, Logger: cfg.Logger,
		InitialPasswordFile: cfg.InitialPasswordFile, AlarmChannels: cfg.AlarmChannels, SampleInterval: cfg.SampleInterval,
		Workflows: cfg.Workflows, SSO: cfg.SSO}
	if cfg.XXLJob != nil {
		oc.XXLJob = cfg.XXLJob
	}
	s.ops = ops.New(oc)
	if cfg.Nonces != nil {
		s.verifier.SharedNonces(cfg.Nonces)
	}
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	if err := trustProxies(r, cfg.TrustedProxies); err != nil {
		return nil, err
	}
	if cfg.Observe != nil {
		r.Use(cfg.Observe) // first: sees the status of every response, panics included
	}
	r.Use(apiHeaders, s.recoverJSON, s.limitBody)
	r.HandleMethodNotAllowed = true
	r.NoRoute(func(c *gin.Context) {
		if s.xxljobNoRoute(c) { // xxljob.go: "//api/registry" and the like
			return
		}
		fail(c, http.StatusNotFound, "no such route: "+c.Request.Method+" "+c.Request.URL.Path)
	})
	r.NoMethod(func(c *gin.Context) {
		fail(c, http.StatusMethodNotAllowed, "method "+c.Request.Method+" not allowed on "+c.Request.URL.Path)
	})

	r.GET("/healthz", func(c *gin.Context) { c.JSON(http.StatusOK, gin.H{"status": "ok"}) })
	r.GET("/readyz", s.ready)
	r.GET("/metrics", s.metrics)

	ex := r.Group("/", s.signed)
	ex.POST(protocol.PathHeartbeat, s.heartbeat)
	ex.POST(protocol.PathResults, s.results)
	ex.POST(protocol.PathDeregister, s.deregister)
	ex.POST(protocol.PathLogs, s.executorLogs) // logs.go

	v1 := r.Group("/api/v1")
	v1.POST("/login", s.login)
	v1.GET("/sso", s.ssoInfo)                    // sso.go
	v1.GET("/sso/oidc/login", s.oidcLogin)       // sso.go
	v1.GET("/sso/oidc/callback", s.oidcCallback) // sso.go
	authed := v1.Group("/", s.authenticate)
	authed.POST("/logout", s.logout)
	authed.GET("/me", s.me)

	view := authed.Group("/", require(auth.RoleViewer))
	view.GET("/jobs", s.listJobs)
	view.GET("/jobs/:id", s.getJob)
	view.GET("/jobs/:id/backfills", s.listJobBackfills) // job_backfill.go
	view.POST("/jobs/validate", s.validateJob)
	view.GET("/runs", s.listRuns)
	view.GET("/runs/:id", s.getRun)
	view.GET("/runs/:id/slots", s.runSlots)
	view.GET("/runs/:id/logs", s.runLogs) // logs.go
	view.GET("/executors", s.listExecutors)
	view.GET("/cluster", s.cluster)
	view.GET("/alarms", s.listAlarms)                        // alarm_groups.go
	view.GET("/alarm-groups/:id/alarms", s.alarmGroupAlarms) // alarm_groups.go
	view.GET("/stats/utilization", s.utilization)            // stats.go
	view.GET("/dashboard", s.dashboard)                      // dashboard.go
	view.GET("/dead", s.listDead)                            // dead.go

	op := authed.Group("/", require(auth.RoleOperator))
	op.POST("/jobs", s.createJob)
	op.DELETE("/jobs/:id", s.deleteJob)
	op.POST("/jobs/:id/enable", s.enableJob)
	op.POST("/jobs/:id/disable", s.disableJob)
	op.POST("/jobs/:id/trigger", s.limitManualRuns, s.triggerJob)
	op.POST("/jobs/:id/backfill", s.limitManualRuns, s.backfillJob) // job_backfill.go
	op.POST("/jobs/:id/clone", s.cloneJob)
	op.POST("/executors/:id/drain", s.drainExecutor)
	op.POST("/executors/:id/undrain", s.undrainExecutor)
	op.PUT("/jobs/:id", s.updateJob)
	op.POST("/jobs/:id/pause", s.pauseJob)
	op.POST("/jobs/:id/resume", s.resumeJob)
	op.POST("/jobs/:id/breaker/close", s.closeBreaker)
	op.POST("/runs/:id/cancel", s.cancelRun)
	op.POST("/alarms/:id/ack", s.ackAlarm)         // runs.go
	op.POST("/alarms/:id/resolve", s.resolveAlarm) // runs.go
	op.POST("/alarms/bulk", s.bulkAlarms)          // alarm_groups.go
	op.POST("/runs/:id/retry", s.limitManualRuns, s.retryRun)
	op.POST("/dead/replay", s.limitManualRuns, s.replayDead) // dead.go
	op.GET("/audit", s.listAudit)
	s.calendarRoutes(view, op) // calendars.go
	s.workflowRoutes(view, op) // workflows.go

	authed.POST("/me/password", s.changeOwnPassword)
	s.apiKeyRoutes(view, "/api-keys") // own API keys (apikeys.go)
	s.apiKeyRoutes(view, "/tokens")   // their old name, kept for existing scripts
	adm := authed.Group("/", require(auth.RoleAdmin))
	adm.GET("/users", s.listUsers)
	adm.POST("/users", s.createUser)
	adm.PUT("/users/:id", s.updateUser)
	adm.DELETE("/users/:id", s.deleteUser)
	s.alarmRoutes(view, op, adm) // alarm_routes.go
	s.appRoutes(view, op, adm)   // apps.go
	s.xxljobRoutes(r, view, op)  // xxljob.go

	web.Register(r)
	return r, nil
}

// trustProxies makes c.ClientIP() the TCP peer's address, or for a peer in
// proxies the rightmost untrusted address of X-Forwarded-For (gin trusts
// every proxy and X-Real-IP by default).
func trustProxies(r *gin.Engine, proxies []netip.Prefix) error {
	r.TrustedPlatform = ""
	r.ForwardedByClientIP = len(proxies) > 0
	r.RemoteIPHeaders = []string{"X-Forwarded-For"}
	var list []string
	for _, p := range proxies {
		list = append(list, p.String())
	}
	if err := r.SetTrustedProxies(list); err != nil {
		return fmt.Errorf("api: trusted proxies: %w", err)
	}
	return nil
}

// apiHeaders: answers of the API carry sessions, API keys and private data;
// no browser or proxy may store them, and no browser may guess another
// type than the JSON they declare. (The console's files set their own
// caching, web.Register.)
func apiHeaders(c *gin.Context) {
	if strings.HasPrefix(c.Request.URL.Path, "/api/") {
		h := c.Writer.Header()
		h.Set("Cache-Control", "no-store")
		h.Set("X-Content-Type-Options", "nosniff")
	}
	c.Next()
}

// errorBody is every error response: Error, and what is wrong with each
// request field in error as a message code. It is sent as an apitypes.ErrorView:
// every field in English (fields, for API clients and the CLI) and as its
// code (field_codes, which the console shows in the reader's language).
type errorBody struct {
	Error  string
	Fields map[string]msg.Msg
}

// MarshalJSON writes b as an apitypes.ErrorView.
func (b errorBody) MarshalJSON() ([]byte, error) {
	v := apitypes.ErrorView{Error: b.Error}
	if len(b.Fields) > 0 {
		v.Fields = make(map[string]string, len(b.Fields))
		v.FieldCodes = make(map[string]apitypes.Message, len(b.Fields))
		for k, m := range b.Fields {
			v.Fields[k] = m.String()
			v.FieldCodes[k] = apitypes.Message{Code: string(m.Code), Args: m.Args}
		}
	}
	return json.Marshal(v)
}

func fail(c *gin.Context, code int, msg string) {
	c.AbortWithStatusJSON(code, errorBody{Error: msg})
}

func (s *Server) internal(c *gin.Context, err error) {
	s.log.Error("request failed", "method", c.Request.Method, "path", c.Request.URL.Path, "err", err)
	fail(c, http.StatusInternalServerError, "internal error; see the admin log")
}

func (s *Server) recoverJSON(c *gin.Context) {
	defer func() {
		if v := recover(); v != nil {
			s.log.Error("panic in handler", "path", c.Request.URL.Path, "panic", v)
			fail(c, http.StatusInternalServerError, "internal error; see the admin log")
		}
	}()
	c.Next()
}

func (s *Server) limitBody(c *gin.Context) {
	if c.Request.Body != nil {
		c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, s.cfg.MaxBodyBytes)
	}
	c.Next()
}

// decode reads a JSON body strictly: one object, no unknown fields.
func decode(c *gin.Context, v any) bool {
	dec := json.NewDecoder(c.Request.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var mbe *http.MaxBytesError
		var ne net.Error
		switch {
		case errors.As(err, &mbe):
			fail(c, http.StatusRequestEntityTooLarge, fmt.Sprintf("request body is larger than %d bytes", mbe.Limit))
		case errors.As(err, &ne) && ne.Timeout():
			fail(c, http.StatusRequestTimeout, "the request body did not arrive within the admin's read timeout: send it at once after the headers")
		case errors.Is(err, io.EOF):
			fail(c, http.StatusBadRequest, "request body is empty: send a JSON object")
		default:
			fail(c, http.StatusBadRequest, "invalid JSON body: "+strings.TrimPrefix(err.Error(), "json: "))
		}
		return false
	}
	if dec.More() {
		fail(c, http.StatusBadRequest, "invalid JSON body: more than one JSON value")
		return false
	}
	return true
}

func (s *Server) ready(c *gin.Context) {
	ctx, cancel := context.WithTimeout(c.Request.Context(), 2*time.Second)
	defer cancel()
	db, ok := s.ops.Readiness(ctx)
	checks := gin.H{}
	for k, v := range db {
		checks[k] = v
	}
	if s.cfg.Coordinator != nil {
		// Reported, not required: see Config.Coordinator.
		if err := s.cfg.Coordinator(ctx); err != nil {
			checks["zookeeper"] = err.Error()
		} else {
			checks["zookeeper"] = "ok"
		}
	}
	code := http.StatusOK
	if !ok {
		code = http.StatusServiceUnavailable
	}
	c.JSON(code, gin.H{"ready": ok, "checks": checks})
}

// metrics serves Config.Metrics (Prometheus text format).
func (s *Server) metrics(c *gin.Context) {
	if s.cfg.Metrics == nil {
		fail(c, http.StatusNotFound, "metrics are not enabled on this admin")
		return
	}
	s.cfg.Metrics.ServeHTTP(c.Writer, c.Request)
}
