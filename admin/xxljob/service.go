package xxljob

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"sync"

	"github.com/shardjob/shardjob/admin/store"
)

// ErrNotXXL is returned by Log and Kill for an attempt whose executor is not
// an XXL-JOB executor.
var ErrNotXXL = errors.New("the attempt was not placed on an XXL-JOB executor")

// ErrNoToken is returned when the app of an executor has no access token
// configured.
var ErrNoToken = errors.New("no XXL-JOB access token configured for the app")

// Service is XXL-JOB executor support for one admin replica: the admin API
// XXL-JOB executors call (ServeHTTP), the routing Pusher the scheduler uses
// (Router), the prober (Run) and the console's log and kill (Log, Kill).
// Create it with New.
type Service struct {
	cfg     Config
	st      *store.Store
	client  *Client
	allowed *AllowedHosts
	log     *slog.Logger
	tokens  map[string]string

	mu      sync.Mutex
	sending map[int64]bool // tokens whose run call this replica is making
}

// New returns a Service. It reads Config.TokensFile and checks the tokens
// and Config.AllowedHosts. Close it after its last use.
func New(cfg Config, st *store.Store) (*Service, error) {
	cfg = cfg.WithDefaults()
	if st == nil {
		return nil, errors.New("xxljob: a store is required")
	}
	tokens := maps.Clone(cfg.Tokens)
	if tokens == nil {
		tokens = map[string]string{}
	}
	if cfg.TokensFile != "" {
		m, err := loadTokensFile(cfg.TokensFile)
		if err != nil {
			return nil, fmt.Errorf("--xxljob-tokens: %w", err)
		}
		maps.Copy(tokens, m)
	}
	cfg.Tokens = tokens
	if err := cfg.validate(); err != nil {
		return nil, fmt.Errorf("--xxljob-tokens: %w", err)
	}
	allowed, err := ParseAllowedHosts(cfg.AllowedHosts)
	if err != nil {
		return nil, fmt.Errorf("--xxljob-allowed-hosts: %w", err)
	}
	return &Service{
		cfg: cfg, st: st, client: NewClient(cfg.RequestTimeout, allowed), allowed: allowed,
		log: cfg.Logger.With("component", "xxljob"), tokens: tokens, sending: map[int64]bool{},
	}, nil
}

// Close releases the connections kept alive to executors. Call it once
// nothing uses the Service any more (Run returned, the HTTP server shut
// down).
func (s *Service) Close() { s.client.CloseIdleConnections() }

// AllowedHosts returns where executors may be (for the start-up log).
func (s *Service) AllowedHosts() string { return s.allowed.String() }

// Apps returns how many apps have an access token.
func (s *Service) Apps() int { return len(s.tokens) }

// tokenFor returns the access token of an app.
func (s *Service) tokenFor(app string) (string, error) {
	t, ok := s.tokens[app]
	if !ok {
		return "", fmt.Errorf("app %s: %w", app, ErrNoToken)
	}
	return t, nil
}

// tokenMatches compares in constant time.
func tokenMatches(want, got string) bool {
	return want != "" && subtle.ConstantTimeCompare([]byte(want), []byte(got)) == 1
}

// instanceID is the executor identity of an XXL-JOB executor: its app and
// address (XXL-JOB executors have no instance id of their own).
func instanceID(app, address string) string { return "xxljob:" + app + "@" + address }

// claimSending marks tokens as being sent by this replica and returns those
// that were not already.
func (s *Service) claimSending(tokens []int64) []int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := tokens[:0:0]
	for _, t := range tokens {
		if !s.sending[t] {
			s.sending[t] = true
			out = append(out, t)
		}
	}
	return out
}

func (s *Service) doneSending(tokens []int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, t := range tokens {
		delete(s.sending, t)
	}
}

// attemptOnXXL returns the attempt and its executor's token, or ErrNotXXL.
func (s *Service) attemptOnXXL(ctx context.Context, token int64) (store.TokenInfo, string, error) {
	info, err := s.st.TokenInfo(ctx, token)
	if err != nil {
		return info, "", err
	}
	if info.Protocol != store.ProtocolXXLJob {
		return info, "", fmt.Errorf("attempt %d: %w", token, ErrNotXXL)
	}
	tok, err := s.tokenFor(info.App)
	return info, tok, err
}

// Log reads the executor's log of an attempt, from line from (1-based).
func (s *Service) Log(ctx context.Context, token int64, from int) (LogResult, error) {
	info, tok, err := s.attemptOnXXL(ctx, token)
	if err != nil {
		return LogResult{}, err
	}
	return s.client.Log(ctx, info.Address, tok, LogParam{LogDateTim: info.ScheduledAt, LogID: token, FromLineNum: max(from, 1)})
}

// Kill asks the attempt's executor to kill the attempt's job. XXL-JOB
// kills by job, not by run: the executor stops the job's running run and
// drops its queued runs on that executor, and calls back a failure for each
// (which the job's retry policy then handles). To stop a whole run on every
// executor, cancel the run.
func (s *Service) Kill(ctx context.Context, token int64) error {
	info, tok, err := s.attemptOnXXL(ctx, token)
	if err != nil {
		return err
	}
	return s.client.Kill(ctx, info.Address, tok, info.JobID)
}
