package xxljob

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/shardjob/shardjob/admin/internal/clock"
	"github.com/shardjob/shardjob/sdk/protocol"
)

// Config of XXL-JOB executor support. Zero values take the documented
// defaults (WithDefaults); New checks it (validate).
type Config struct {
	// Tokens maps an app (the XXL-JOB executor's appname, its registryKey)
	// to the access token its executors send in XXL-JOB-ACCESS-TOKEN, and
	// that the admin sends them. There is no default token: an app without
	// one here cannot register XXL-JOB executors. Merged with TokensFile
	// (the file wins).
	Tokens map[string]string
	// TokensFile is a JSON object {"app": "token", …} (--xxljob-tokens).
	// Optional.
	TokensFile string
	// AllowedHosts is where registered executors may be
	// (--xxljob-allowed-hosts): CIDRs, IP addresses and host names (see
	// AllowedHosts). A registry value whose host is elsewhere is refused,
	// and the admin connects to no address outside it. Default
	// DefaultAllowedHosts: loopback and private networks.
	AllowedHosts []string
	// Timing is the admin's heartbeat timing (protocol.Timing), the
	// scheduler's: every Timing.Heartbeat the admin probes each registered
	// XXL-JOB executor (beat) and records a heartbeat for it when it
	// answers, and Timing.LostAfter is the lease given to the attempts of
	// an executor that answered (as a shardjob heartbeat renews them).
	// Defaults 2s and 3 × Heartbeat.
	Timing protocol.Timing
	// RequestTimeout bounds each call to an executor (beat, run, kill,
	// log). Default 5s; a beat is also bounded by Timing.Heartbeat.
	RequestTimeout time.Duration
	// ResultTimeout is how long a slot on an XXL-JOB executor may run
	// without a callback when its job has no timeout_ms; after it (or
	// after the job's timeout) plus ResultGrace the attempt fails as timed
	// out and is retried per the job's retry policy. Default 10 minutes.
	ResultTimeout time.Duration
	// ResultGrace is added to the timeout before a missing callback counts
	// as lost: the executor's own timeout fires first and its callback
	// travels. Default 5s.
	ResultGrace time.Duration
	// RedispatchAfter: an attempt placed on an XXL-JOB executor whose run
	// call did not get through (the executor was briefly unreachable) is
	// sent again at a later probe once it has waited this long. Default
	// 2 × RequestTimeout, so that it does not race the first push.
	RedispatchAfter time.Duration
	// ConcurrentApps are the apps whose XXL-JOB executors may run several
	// slots of one handler at a time (--xxljob-concurrent-apps): executors
	// that keep one task per XXL-JOB job id, such as XXL-JOB's own Java
	// executor. The executors of every other app get one slot per handler at
	// a time, the others of that handler wait in the admin (assigned) and are
	// sent when it ends: xxl-job-executor-go keeps one task object per
	// handler name, so a second task of a handler overwrites the first's
	// logId, params and cancel function and both callbacks carry the
	// second's logId (docs/migration.md). Default: none (safe).
	ConcurrentApps []string
	// IdleCheckAfter: a slot running on an XXL-JOB executor without a
	// callback for longer than this is checked with the executor's idleBeat
	// for its job id, and again every IdleCheckAfter. Default 10s.
	IdleCheckAfter time.Duration
	// IdleConfirm: an executor that says it is idle for a running slot's
	// job id and says so again at least IdleConfirm later, with no callback
	// seen in between (a callback in flight gets that long to arrive), has
	// lost the slot: it is marked lost and placed again with a new token,
	// and an executor_lost alarm is raised. Default 2 × Timing.Heartbeat,
	// at least 1s.
	IdleConfirm time.Duration
	// Capacity recorded for XXL-JOB executors (they do not report one);
	// placement spreads slots in proportion to capacity. Default 4.
	Capacity int
	// ProbeConcurrency bounds the executors probed at once. Default 16.
	ProbeConcurrency int
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// Clock stamps the attempts an XXL-JOB executor refused. Default
	// clock.System.
	Clock clock.Clock
}

// WithDefaults fills zero fields.
func (c Config) WithDefaults() Config {
	c.Timing = c.Timing.WithDefaults()
	if c.RequestTimeout <= 0 {
		c.RequestTimeout = 5 * time.Second
	}
	if c.ResultTimeout <= 0 {
		c.ResultTimeout = 10 * time.Minute
	}
	if c.ResultGrace <= 0 {
		c.ResultGrace = 5 * time.Second
	}
	if c.RedispatchAfter <= 0 {
		c.RedispatchAfter = 2 * c.RequestTimeout
	}
	if c.IdleCheckAfter <= 0 {
		c.IdleCheckAfter = 10 * time.Second
	}
	if c.IdleConfirm <= 0 {
		c.IdleConfirm = max(2*c.Timing.Heartbeat, time.Second)
	}
	if c.Capacity <= 0 {
		c.Capacity = 4
	}
	if c.ProbeConcurrency <= 0 {
		c.ProbeConcurrency = 16
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Clock == nil {
		c.Clock = clock.System
	}
	return c
}

// wellKnownToken is the access token shipped in XXL-JOB's sample
// configuration; executors that still use it are open to anyone.
const wellKnownToken = "default_token"

// minTokenLen is the shortest access token accepted.
const minTokenLen = 8

// concurrentApps checks ConcurrentApps and returns them as a set.
func (c Config) concurrentApps() (map[string]bool, error) {
	out := make(map[string]bool, len(c.ConcurrentApps))
	for _, app := range c.ConcurrentApps {
		if strings.TrimSpace(app) == "" || len(app) > 64 || strings.TrimSpace(app) != app {
			return nil, fmt.Errorf("app %q: an app name is 1 to 64 characters without surrounding spaces; give the apps comma separated, e.g. orders,billing", app)
		}
		out[app] = true
	}
	return out, nil
}

// validate checks the tokens (after the file was merged).
func (c Config) validate() error {
	for app, tok := range c.Tokens {
		switch {
		case strings.TrimSpace(app) == "" || len(app) > 64:
			return fmt.Errorf("xxljob tokens: app %q: must be 1 to 64 characters", app)
		case tok == wellKnownToken:
			return fmt.Errorf("xxljob tokens: app %s uses %q, the token of XXL-JOB's sample configuration, which anyone can guess: set a random token (openssl rand -hex 16) in the executors' xxl.job.accessToken and here", app, wellKnownToken)
		case len(tok) < minTokenLen:
			return fmt.Errorf("xxljob tokens: app %s: the token is %d characters; use at least %d (openssl rand -hex 16)", app, len(tok), minTokenLen)
		}
	}
	return nil
}

// loadTokensFile reads a JSON object app → token.
func loadTokensFile(path string) (map[string]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("xxljob tokens file: %w", err)
	}
	var m map[string]string
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("xxljob tokens file %s: want a JSON object {\"app\": \"token\"}: %w", path, err)
	}
	if m == nil {
		return nil, errors.New("xxljob tokens file " + path + ": want a JSON object {\"app\": \"token\"}, got null")
	}
	return m, nil
}
