package xxljob

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/shardjob/shardjob/admin/store"
)

// AdminPaths are the admin API paths XXL-JOB executors call, relative to the
// admin address they are configured with (xxl.job.admin.addresses). Both
// the bare paths and the ones under /xxl-job-admin (XXL-JOB's default
// context path) are served, so that executors only need the host changed.
var AdminPaths = []string{
	"/api/registry", "/api/registryRemove", "/api/callback",
	"/xxl-job-admin/api/registry", "/xxl-job-admin/api/registryRemove", "/xxl-job-admin/api/callback",
}

// maxBody bounds request bodies of XXL-JOB executors.
const maxBody = 1 << 20

// ServeHTTP serves AdminPaths. Every answer is a ReturnT with HTTP status
// 200, as XXL-JOB's admin answers: code 200 for success, 500 with a message
// for an error.
func (s *Service) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var rt ReturnT
	switch {
	case r.Method != http.MethodPost:
		rt = failure("invalid request: HTTP method %s is not supported, use POST", r.Method)
	case strings.HasSuffix(r.URL.Path, "/api/registry"):
		rt = s.registry(r, false)
	case strings.HasSuffix(r.URL.Path, "/api/registryRemove"):
		rt = s.registry(r, true)
	case strings.HasSuffix(r.URL.Path, "/api/callback"):
		rt = s.callback(r)
	default:
		rt = failure("invalid request: no XXL-JOB admin API at %s", r.URL.Path)
	}
	w.Header().Set("Content-Type", "application/json;charset=UTF-8")
	w.WriteHeader(http.StatusOK)
	_ = json.NewEncoder(w).Encode(rt)
}

func decodeBody(r *http.Request, v any) error {
	dec := json.NewDecoder(http.MaxBytesReader(nil, r.Body, maxBody))
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("invalid request body: %w", err)
	}
	return nil
}

// registry registers (or, remove, deregisters) an XXL-JOB executor as an
// executor of its app with the xxljob protocol.
func (s *Service) registry(r *http.Request, remove bool) ReturnT {
	var p RegistryParam
	if err := decodeBody(r, &p); err != nil {
		return failure("%v", err)
	}
	app, addr := strings.TrimSpace(p.RegistryKey), strings.TrimSpace(p.RegistryValue)
	if g := strings.ToUpper(strings.TrimSpace(p.RegistryGroup)); g != "" && g != "EXECUTOR" {
		return failure("registryGroup %q: shardjob registers only EXECUTOR", p.RegistryGroup)
	}
	if app == "" || len(app) > 64 {
		return failure("registryKey (the executor's appname) is required, at most 64 characters")
	}
	if err := validAddress(addr); err != nil {
		return failure("registryValue %q: %v", addr, err)
	}
	want, err := s.tokenFor(app)
	if err != nil {
		s.log.Warn("refused XXL-JOB executor: no access token configured for its app", "app", app, "address", addr, "remote", r.RemoteAddr)
		return failure("app %s has no XXL-JOB access token configured on this shardjob admin, so its executors cannot register: the operator adds {\"%s\": \"<token>\"} to the --xxljob-tokens file (the same token as the executors' xxl.job.accessToken)", app, app)
	}
	if !tokenMatches(want, r.Header.Get(TokenHeader)) {
		s.log.Warn("refused XXL-JOB executor: wrong access token", "app", app, "address", addr, "remote", r.RemoteAddr)
		return failure("The access token is wrong: the %s header does not match the token configured for app %s", TokenHeader, app)
	}
	id := instanceID(app, addr)
	ctx := r.Context()
	if remove {
		if err := s.st.Deregister(ctx, id); err != nil {
			s.log.Error("XXL-JOB registryRemove", "app", app, "address", addr, "err", err)
			return failure("internal error; see the admin log")
		}
		s.log.Info("XXL-JOB executor removed itself", "app", app, "address", addr)
		return success()
	}
	ex, err := s.st.RegisterXXLExecutor(ctx, store.ExecutorInfo{
		InstanceID: id, App: app, Address: addr, Capacity: s.cfg.Capacity, Version: "xxl-job",
	})
	if err != nil {
		s.log.Error("XXL-JOB registry", "app", app, "address", addr, "err", err)
		return failure("internal error; see the admin log")
	}
	s.log.Debug("XXL-JOB executor registered", "app", app, "address", addr, "executor_id", ex.ID)
	return success()
}

// validAddress accepts an http(s) base URL of at most 120 characters.
func validAddress(addr string) error {
	if addr == "" || len(addr) > 120 {
		return errors.New("the executor address is required, at most 120 characters")
	}
	u, err := url.Parse(addr)
	if err != nil {
		return err
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return errors.New("must be an http:// or https:// base URL such as http://10.0.0.5:9999/")
	}
	return nil
}

// callback records the outcome of runs. logId is the attempt's token;
// outcomes of superseded attempts are ignored (the token fence) but
// acknowledged, so that the executor stops sending them.
func (s *Service) callback(r *http.Request) ReturnT {
	var items []CallbackParam
	if err := decodeBody(r, &items); err != nil {
		return failure("%v", err)
	}
	got := r.Header.Get(TokenHeader)
	known := false
	for _, t := range s.tokens {
		if tokenMatches(t, got) {
			known = true
		}
	}
	if !known {
		s.log.Warn("refused XXL-JOB callback: wrong access token", "remote", r.RemoteAddr, "items", len(items))
		return failure("The access token is wrong")
	}
	ctx := r.Context()
	now, err := s.st.NowMS(ctx)
	if err != nil {
		s.log.Error("XXL-JOB callback", "err", err)
		return failure("internal error; see the admin log")
	}
	outcomes := make([]store.SlotOutcome, 0, len(items))
	for _, it := range items {
		info, err := s.st.TokenInfo(ctx, it.LogID)
		if errors.Is(err, store.ErrNotFound) {
			s.log.Info("XXL-JOB callback for an unknown logId acknowledged and ignored", "log_id", it.LogID)
			continue
		}
		if err != nil {
			s.log.Error("XXL-JOB callback", "log_id", it.LogID, "err", err)
			return failure("internal error; see the admin log")
		}
		if info.Protocol != store.ProtocolXXLJob {
			s.log.Warn("XXL-JOB callback for an attempt of a shardjob executor acknowledged and ignored", "log_id", it.LogID)
			continue
		}
		if want, _ := s.tokenFor(info.App); !tokenMatches(want, got) {
			s.log.Warn("refused XXL-JOB callback: the token is not the one of the attempt's app", "log_id", it.LogID, "app", info.App)
			return failure("The access token is wrong for logId %d", it.LogID)
		}
		code, msg := it.outcome()
		o := store.SlotOutcome{Token: it.LogID, ExecutorID: info.ExecutorID, Status: store.AttemptSucceeded, FinishedAt: now}
		if info.StartedAt.Valid && info.StartedAt.Int64 <= now {
			o.StartedAt = info.StartedAt.Int64
		}
		switch code {
		case CodeSuccess:
		case CodeTimeout:
			o.Status, o.Error = store.AttemptFailed, "timed out on the XXL-JOB executor: "+msg
		default:
			o.Status, o.Error = store.AttemptFailed, fmt.Sprintf("XXL-JOB handler failed (handleCode %d): %s", code, msg)
		}
		outcomes = append(outcomes, o)
	}
	if len(outcomes) == 0 {
		return success()
	}
	accepted, err := s.st.FinishAttempts(ctx, outcomes)
	if err != nil {
		s.log.Error("XXL-JOB callback", "err", err)
		return failure("internal error; see the admin log")
	}
	for i, ok := range accepted {
		if !ok {
			s.log.Info("late XXL-JOB callback for a superseded attempt acknowledged and ignored", "log_id", outcomes[i].Token, "status", outcomes[i].Status)
		}
	}
	return success()
}
