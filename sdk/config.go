package sdk

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/shardjob/shardjob/sdk/protocol"
)

// Defaults applied by Config.WithDefaults.
const (
	DefaultListenAddr        = "127.0.0.1:0"
	DefaultCapacity          = 4
	DefaultHeartbeatInterval = protocol.DefaultHeartbeat
	DefaultDrainTimeout      = 30 * time.Second
	DefaultResultBatch       = 256
	DefaultMaxPendingResults = 100_000
	DefaultHTTPTimeout       = 10 * time.Second

	// ResultFlushInterval is the longest a finished slot's result waits
	// locally before the first attempt to send it (results are batched in
	// the meantime).
	ResultFlushInterval = 200 * time.Millisecond
)

// Config configures an Executor. The zero value of every optional field means
// "use the default"; WithDefaults fills them in and New validates the result.
type Config struct {
	// App is the app whose jobs this executor runs. Required.
	App string

	// Admins are the base URLs of the admin replicas, e.g.
	// ["http://127.0.0.1:8080"]. Required. Requests go to one admin at a
	// time: the executor sticks to the last admin that answered and, when it
	// fails, tries the others in order. Replicas announced by the admin in
	// heartbeat responses are appended to this list.
	Admins []string

	// Secret is the HMAC secret shared with the admin, at least
	// protocol.MinSecretLen characters. Required: there is no default.
	Secret string

	// ListenAddr is the address of the executor's HTTP server, which receives
	// pushes (assign, cancel) from the admin. Default "127.0.0.1:0" (a free
	// loopback port).
	ListenAddr string

	// AdvertiseURL is the base URL the admin uses to reach this executor.
	// Default "http://" + the actual listen address. Required when
	// ListenAddr listens on all interfaces (":9090", "0.0.0.0:9090"),
	// because then the listen address is not an address the admin can dial.
	AdvertiseURL string

	// InstanceID identifies this process to the admin. Default
	// hostname-pid-random.
	InstanceID string

	// Capacity is the number of slots run at once. Default 4. Further
	// assignments are queued locally and started by priority, then in
	// arrival order (see PriorityAging).
	Capacity int

	// PriorityAging is how long a queued slot waits before it counts one
	// priority higher (protocol.Priority.Aged): a low slot queued for 3 ×
	// PriorityAging starts before newer critical ones. Default
	// protocol.DefaultPriorityAging (5m); negative: no aging.
	PriorityAging time.Duration

	// HeartbeatInterval is the time between heartbeats. Default 2s. A
	// positive interval_ms in the admin's response overrides it.
	HeartbeatInterval time.Duration

	// DrainTimeout bounds the graceful part of Stop: running slots get this
	// long to finish before their contexts are cancelled (they are then
	// reported cancelled), and the remaining results get this long again to
	// be delivered. Default 30s.
	DrainTimeout time.Duration

	// ResultBatch is the largest number of results sent in one request.
	// Default 256. Results are sent at the latest ResultFlushInterval after
	// they are produced.
	ResultBatch int

	// MaxPendingResults bounds the work the executor holds while no admin
	// answers: queued + running slots + results not yet acknowledged. When it
	// is reached, new assignments are refused (not acknowledged, so the
	// admin places them elsewhere or redelivers them later); results already
	// produced are never dropped. Default 100000.
	MaxPendingResults int

	// ResultsDir, when set, keeps results that no admin has acknowledged yet
	// in a journal file in this directory, so that they survive a restart of
	// the executor and are delivered by the next process. Give the executor a
	// stable InstanceID too: the admin accepts a result only from the
	// instance that holds the token. Default "" (results are kept in memory
	// only).
	ResultsDir string

	// HTTPClient sends requests to the admin. Default: a client of its own
	// with a 10s timeout.
	HTTPClient *http.Client

	// Logger receives the executor's logs. Default slog.Default().
	Logger *slog.Logger

	// Version is reported to the admin (the business service's version).
	Version string

	// Labels are reported to the admin with every heartbeat.
	Labels map[string]string

	// MetricsRegisterer, when set, receives the executor's Prometheus
	// collectors (shardjob_executor_*, every series labelled app=App; see
	// docs/metrics.md). Default nil: no metrics are registered. New fails
	// when they are registered there already (two executors of one app on
	// one registry); Stop unregisters them.
	MetricsRegisterer prometheus.Registerer

	// MetricsGatherer, when set, is served as GET /metrics on the
	// executor's HTTP server (ListenAddr), unauthenticated. Default nil: no
	// /metrics route; a service with a metrics endpoint of its own passes
	// its registry as MetricsRegisterer and serves it there instead.
	MetricsGatherer prometheus.Gatherer

	// DisableLogShipping stops shipping handler logs to the admin. Default
	// false: every record logged through Task.Logger at LogShipLevel or
	// above also goes, in batches, to an admin (console run page,
	// shardjobctl logs), without ever blocking the handler (see logship.go).
	DisableLogShipping bool

	// LogShipLevel is the lowest level shipped. Default slog.LevelInfo (the
	// zero value). It does not change what the configured Logger prints.
	LogShipLevel slog.Level

	// LogBufferLines bounds the lines waiting to be shipped. Default 10000.
	// When it is reached the oldest line is dropped and counted; the counts
	// are reported to the admin, which shows them on the run.
	LogBufferLines int

	// LogBufferBytes bounds the bytes of the lines waiting to be shipped, as
	// LogBufferLines does their number. Default 4 MiB.
	LogBufferBytes int

	// LogLineMax bounds a shipped line: a longer message is cut, and so are
	// its attributes (encoded as JSON). Default 4096 bytes; at least 256.
	LogLineMax int

	// LogBatch is the largest number of lines sent in one request. Default
	// 500. Lines are sent at the latest LogFlushInterval after they are
	// logged.
	LogBatch int
}

// ErrInvalidConfig is wrapped by every error of Config.Validate.
var ErrInvalidConfig = errors.New("invalid shardjob executor config")

// WithDefaults returns a copy of c with every unset optional field set to its
// default. Fields that are set are left alone, even if invalid: Validate
// reports those.
func (c Config) WithDefaults() Config {
	c.Admins = append([]string(nil), c.Admins...)
	for i, a := range c.Admins {
		c.Admins[i] = strings.TrimRight(strings.TrimSpace(a), "/")
	}
	c.AdvertiseURL = strings.TrimRight(c.AdvertiseURL, "/")
	if c.ListenAddr == "" {
		c.ListenAddr = DefaultListenAddr
	}
	if c.InstanceID == "" {
		c.InstanceID = defaultInstanceID()
	}
	if c.Capacity == 0 {
		c.Capacity = DefaultCapacity
	}
	if c.HeartbeatInterval == 0 {
		c.HeartbeatInterval = DefaultHeartbeatInterval
	}
	if c.PriorityAging == 0 {
		c.PriorityAging = protocol.DefaultPriorityAging
	}
	if c.DrainTimeout == 0 {
		c.DrainTimeout = DefaultDrainTimeout
	}
	if c.ResultBatch == 0 {
		c.ResultBatch = DefaultResultBatch
	}
	if c.MaxPendingResults == 0 {
		c.MaxPendingResults = DefaultMaxPendingResults
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.LogBufferLines == 0 {
		c.LogBufferLines = DefaultLogBufferLines
	}
	if c.LogBufferBytes == 0 {
		c.LogBufferBytes = DefaultLogBufferBytes
	}
	if c.LogLineMax == 0 {
		c.LogLineMax = DefaultLogLineMax
	}
	if c.LogBatch == 0 {
		c.LogBatch = DefaultLogBatch
	}
	return c
}

// Validate reports every problem of c, each naming the field and the fix.
// Zero values of optional fields are valid (they mean the default), so
// Validate can be called before or after WithDefaults. All errors wrap
// ErrInvalidConfig.
func (c Config) Validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: "+format, append([]any{ErrInvalidConfig}, args...)...))
	}
	if strings.TrimSpace(c.App) == "" {
		bad("App is empty: set it to the app whose jobs this executor runs (as named in the console)")
	}
	if len(c.Admins) == 0 {
		bad(`Admins is empty: set at least one admin base URL, e.g. "http://127.0.0.1:8080"`)
	}
	for i, a := range c.Admins {
		if err := checkBaseURL(strings.TrimRight(strings.TrimSpace(a), "/")); err != nil {
			bad("Admins[%d] %q: %v", i, a, err)
		}
	}
	if err := protocol.ValidateSecret(c.Secret); err != nil {
		bad("Secret: must be at least %d characters (got %d): use the secret the admin was started with (there is no default)", protocol.MinSecretLen, len(c.Secret))
	}
	if c.ListenAddr != "" {
		host, _, err := net.SplitHostPort(c.ListenAddr)
		switch {
		case err != nil:
			bad("ListenAddr %q: %v: use host:port, e.g. 127.0.0.1:9090", c.ListenAddr, err)
		case c.AdvertiseURL == "" && (host == "" || net.ParseIP(host) != nil && net.ParseIP(host).IsUnspecified()):
			bad("AdvertiseURL is empty but ListenAddr %q listens on all interfaces: set AdvertiseURL to the URL the admin can reach, e.g. http://10.0.0.5:9090", c.ListenAddr)
		}
	}
	if c.AdvertiseURL != "" {
		if err := checkBaseURL(strings.TrimRight(c.AdvertiseURL, "/")); err != nil {
			bad("AdvertiseURL %q: %v", c.AdvertiseURL, err)
		}
	}
	if c.Capacity < 0 {
		bad("Capacity is %d: set it to the number of slots to run at once (>= 1), or 0 for the default %d", c.Capacity, DefaultCapacity)
	}
	if c.HeartbeatInterval < 0 {
		bad("HeartbeatInterval is %s: must be positive, or 0 for the default %s", c.HeartbeatInterval, DefaultHeartbeatInterval)
	}
	if c.DrainTimeout < 0 {
		bad("DrainTimeout is %s: must be positive, or 0 for the default %s", c.DrainTimeout, DefaultDrainTimeout)
	}
	if c.ResultBatch < 0 {
		bad("ResultBatch is %d: must be >= 1, or 0 for the default %d", c.ResultBatch, DefaultResultBatch)
	}
	if c.MaxPendingResults < 0 {
		bad("MaxPendingResults is %d: must be >= 1, or 0 for the default %d", c.MaxPendingResults, DefaultMaxPendingResults)
	}
	if c.LogBufferLines < 0 || c.LogBufferBytes < 0 || c.LogBatch < 0 {
		bad("LogBufferLines (%d), LogBufferBytes (%d) and LogBatch (%d) must be positive, or 0 for the defaults %d, %d and %d",
			c.LogBufferLines, c.LogBufferBytes, c.LogBatch, DefaultLogBufferLines, DefaultLogBufferBytes, DefaultLogBatch)
	}
	if c.LogLineMax != 0 && c.LogLineMax < 256 {
		bad("LogLineMax is %d: must be at least 256 bytes, or 0 for the default %d", c.LogLineMax, DefaultLogLineMax)
	}
	return errors.Join(errs...)
}

// checkBaseURL accepts absolute http(s) URLs without query or fragment.
func checkBaseURL(s string) error {
	if !strings.HasPrefix(s, "http://") && !strings.HasPrefix(s, "https://") {
		return errors.New(`must start with "http://" or "https://"`)
	}
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("not a URL: %w", err)
	}
	if u.Host == "" {
		return errors.New("has no host: write it as http://host:port")
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return errors.New("must not have a query or fragment: give the base URL only")
	}
	return nil
}

func defaultInstanceID() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "executor"
	}
	b := make([]byte, 4)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on supported platforms.
	return fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(b))
}
