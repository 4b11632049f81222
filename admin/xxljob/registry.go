package xxljob

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shardjob/shardjob/admin/msg"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/sdk/protocol"
)

// AdminPaths are the admin API paths XXL-JOB executors call, relative to the
// admin address they are configured with (xxl.job.admin.addresses). Both
// the bare paths and the ones under /xxl-job-admin (XXL-JOB's default
// context path) are served, so that executors only need the host changed.
var AdminPaths = []string{
	"/api/registry", "/api/registryRemove", "/api/callback",
	"/xxl-job-admin/api/registry", "/xxl-job-admin/api/registryRemove", "/xxl-job-admin/api/callback",
}

// CleanPath collapses runs of slashes: an executor configured with an admin
// address that ends in a slash ("http://admin:8080/") calls
// "//api/registry". It returns one of AdminPaths for such a path.
func CleanPath(p string) string {
	for strings.Contains(p, "//") {
		p = strings.ReplaceAll(p, "//", "/")
	}
	return p
}

// IsAdminPath reports whether p, cleaned (CleanPath), is one of AdminPaths.
func IsAdminPath(p string) bool { return slices.Contains(AdminPaths, CleanPath(p)) }

// maxBody bounds request bodies of XXL-JOB executors.
const maxBody = 1 << 20

// errWrongToken answers a registration whose token is not its app's, and one
// of an app without a token alike, so that app names cannot be probed.
const errWrongToken = "The access token is wrong, or the app (registryKey) has no access token on this shardjob admin: the executor's xxl.job.accessToken (header " + TokenHeader + ") must be the token the operator configured for its appname in the --xxljob-tokens file"

// ServeHTTP serves AdminPaths. Every answer is a ReturnT with HTTP status
// 200, as XXL-JOB's admin answers: code 200 for success, 500 with a message
// for an error.
func (s *Service) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var rt ReturnT
	path := CleanPath(r.URL.Path)
	switch {
	case r.Method != http.MethodPost:
		rt = failure("invalid request: HTTP method %s is not supported, use POST", r.Method)
	case strings.HasSuffix(path, "/api/registry"):
		rt = s.registry(r, false)
	case strings.HasSuffix(path, "/api/registryRemove"):
		rt = s.registry(r, true)
	case strings.HasSuffix(path, "/api/callback"):
		rt = s.callback(r)
	default:
		rt = failure("invalid request: no XXL-JOB admin API at %s", path)
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
// executor of its app with the xxljob protocol. A registration is accepted
// only when
//
//   - the token is the app's (one answer for a wrong token and for an app
//     without a token, so that app names cannot be probed);
//   - the address is an http(s) base URL whose host is allowed
//     (Config.AllowedHosts);
//   - no other live executor has the address: an executor of another app,
//     or a shardjob executor (an address belongs to one app and one
//     protocol at a time; it is free again once that executor deregisters
//     or is silent for LostAfter);
//   - the executor at the address answers a beat with the app's token:
//     a holder of one app's token cannot register an address where an
//     executor of another app listens;
//   - an AppNameHeader, when sent, names the registryKey.
//
// The executor's protocol generation is detected here: one that sends the
// AppNameHeader (XXL-JOB 3.5 on) is Gen35, any other GenClassic. It is
// recorded as the executor's version (VersionLabel), read by every replica.
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
	u, err := parseAddress(addr)
	if err != nil {
		return failure("registryValue %q: %v", addr, err)
	}
	gen := GenClassic
	if hdr, sent := r.Header[http.CanonicalHeaderKey(AppNameHeader)]; sent {
		gen = Gen35
		if len(hdr) != 1 || strings.TrimSpace(hdr[0]) != app {
			return failure("header %s %q is not the registryKey %q: an executor sends its own appname in both (xxl.job.executor.appname)", AppNameHeader, strings.Join(hdr, ","), app)
		}
	}
	tok, err := s.tokenFor(app)
	if err != nil || !tokenMatches(tok, r.Header.Get(TokenHeader)) {
		why := "wrong access token"
		if err != nil {
			why = "no access token configured for its app"
		}
		s.log.Warn("refused XXL-JOB executor: "+why, "app", app, "address", addr, "remote", r.RemoteAddr)
		return failure(errWrongToken)
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
	if err := s.allowed.CheckHost(u.Hostname()); err != nil {
		s.log.Warn("refused XXL-JOB executor: address not allowed", "app", app, "address", addr, "remote", r.RemoteAddr)
		return failure("registryValue %q: %v; register an address the admin may call, or ask the operator to add the executors' network to --xxljob-allowed-hosts", addr, err)
	}
	if rt, ok := s.addressTaken(ctx, app, addr); !ok {
		return rt
	}
	if rt, ok := s.confirm(ctx, Target{Address: addr, App: app, Token: tok, Generation: gen}); !ok {
		return rt
	}
	ex, err := s.st.RegisterXXLExecutor(ctx, store.ExecutorInfo{
		InstanceID: id, App: app, Address: addr, Capacity: s.cfg.Capacity, Version: VersionLabel(gen),
	})
	if err != nil {
		s.log.Error("XXL-JOB registry", "app", app, "address", addr, "err", err)
		return failure("internal error; see the admin log")
	}
	s.log.Debug("XXL-JOB executor registered", "app", app, "address", addr, "executor_id", ex.ID, "generation", gen)
	return success()
}

// addressTaken refuses the registration of an address another live
// executor has (another app's, or a shardjob executor's).
func (s *Service) addressTaken(ctx context.Context, app, addr string) (ReturnT, bool) {
	live, err := s.st.LiveExecutorsAt(ctx, addr, instanceID(app, addr), s.cfg.Timing.LostAfter.Milliseconds())
	if err != nil {
		s.log.Error("XXL-JOB registry", "app", app, "address", addr, "err", err)
		return failure("internal error; see the admin log"), false
	}
	if len(live) == 0 {
		return ReturnT{}, true
	}
	s.log.Warn("refused XXL-JOB executor: another live executor has its address", "app", app, "address", addr,
		"holder_executor_id", live[0].ID, "holder_app", live[0].App, "holder_protocol", live[0].Protocol)
	return failure("registryValue %q is the address of another live executor (of another app, or a shardjob executor): an address belongs to one app at a time. Register the address this executor really listens on (xxl.job.executor.address); the address is free again once that executor deregisters or has not answered for %s", addr, s.cfg.Timing.LostAfter), false
}

// confirm calls the executor's beat with the app's token (and name): the
// executor at the address must be one of the app's.
func (s *Service) confirm(ctx context.Context, t Target) (ReturnT, bool) {
	app, addr := t.App, t.Address
	bctx, cancel := context.WithTimeout(ctx, min(s.cfg.RequestTimeout, s.cfg.Timing.Heartbeat))
	err := s.client.Beat(bctx, t)
	cancel()
	if err == nil {
		return ReturnT{}, true
	}
	s.log.Warn("refused XXL-JOB executor: the executor at its address did not confirm it", "app", app, "address", addr, "err", err)
	var ce *CallError
	switch {
	case errors.Is(err, ErrHostNotAllowed):
		return failure("registryValue %q: %v: the name resolves outside %s; register an address the admin may call, or ask the operator to add the executors' network to --xxljob-allowed-hosts", addr, ErrHostNotAllowed, s.allowed), false
	case errors.As(err, &ce):
		return failure("registryValue %q: the executor there refused app %s's access token (beat answered code %d): register the address of an executor of app %s", addr, app, ce.Code, app), false
	}
	return failure("registryValue %q: the admin could not confirm the executor at this address (its beat did not answer with code 200 within %s): register the address the admin can reach it at, once it listens", addr, min(s.cfg.RequestTimeout, s.cfg.Timing.Heartbeat)), false
}

// parseAddress accepts an http(s) base URL of at most 120 characters.
func parseAddress(addr string) (*url.URL, error) {
	if addr == "" || len(addr) > 120 {
		return nil, errors.New("the executor address is required, at most 120 characters")
	}
	return protocol.ParseAddress(addr)
}

// callback records the outcome of runs. logId is the attempt's token;
// outcomes of superseded attempts are ignored (the token fence) but
// acknowledged, so that the executor stops sending them. The body is a
// bare array or (3.5) {"callbackList": […]}; an AppNameHeader, when sent,
// must name the app whose token came and whose attempts are called back.
func (s *Service) callback(r *http.Request) ReturnT {
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, maxBody))
	if err != nil {
		return failure("invalid request body: %v", err)
	}
	items, err := parseCallbacks(body)
	if err != nil {
		return failure("%v", err)
	}
	got := r.Header.Get(TokenHeader)
	appHdr, named := r.Header[http.CanonicalHeaderKey(AppNameHeader)]
	known := false
	for app, t := range s.tokens {
		if tokenMatches(t, got) && (!named || (len(appHdr) == 1 && appHdr[0] == app)) {
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
	var mine []int64 // tokens this request records
	defer func() { s.unclaim(s.recording, mine) }()
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
		if want, _ := s.tokenFor(info.App); !tokenMatches(want, got) || (named && appHdr[0] != info.App) {
			s.log.Warn("refused XXL-JOB callback: the token is not the one of the attempt's app", "log_id", it.LogID, "app", info.App)
			return failure("The access token is wrong") // as for an unknown token: whose logId it is stays unsaid
		}
		code, answer := it.outcome()
		ended := info.Current && info.Status != store.AttemptAssigned && info.Status != store.AttemptRunning
		if ended || len(s.claim(s.recording, []int64{it.LogID})) == 0 {
			// The first outcome stands: a duplicate (in this request, in
			// flight on this replica, or recorded before), or a callback
			// after the admin killed, cancelled or timed out the attempt.
			n := s.ignoredCallbacks.Add(1)
			s.log.Info("XXL-JOB callback for an attempt that already has its outcome acknowledged and ignored (a duplicate, or after the admin ended the attempt)",
				"log_id", it.LogID, "status", info.Status, "handle_code", code, "ignored_callbacks_total", n)
			continue
		}
		mine = append(mine, it.LogID)
		o := store.SlotOutcome{ExecutorID: info.ExecutorID, SlotResult: protocol.SlotResult{Token: it.LogID, Status: store.AttemptSucceeded, FinishedAt: now}}
		if info.StartedAt.Valid && info.StartedAt.Int64 <= now {
			o.StartedAt = info.StartedAt.Int64
		}
		switch {
		case code == CodeSuccess && info.TimeoutMS > 0 && info.DispatchedAt > 0 && now-info.DispatchedAt >= info.TimeoutMS:
			// Some executors (xxl-job-executor-go) stop a task at its
			// executorTimeout and call back success: a success that comes
			// later than the timeout after the run call was sent is a
			// timeout.
			o.Status, o.ErrorClass, o.Reason = store.AttemptFailed, protocol.ClassTimeout, msg.New(msg.AttemptXXLLateSuccess, "answer", strconv.Quote(answer),
				"after", time.Duration(now-info.DispatchedAt)*time.Millisecond, "timeout", time.Duration(info.TimeoutMS)*time.Millisecond)
		case code == CodeSuccess:
		case code == CodeTimeout:
			o.Status, o.ErrorClass, o.Reason = store.AttemptFailed, protocol.ClassTimeout, msg.New(msg.AttemptXXLTimeout, "answer", answer)
		default:
			// Any other code (500 and the rest): retryable, as XXL-JOB's
			// own admin retries it (docs/migration.md, error classes).
			o.Status, o.ErrorClass, o.Reason = store.AttemptFailed, protocol.ClassRetryable, msg.New(msg.AttemptXXLFailed, "code", code, "answer", answer)
		}
		outcomes = append(outcomes, o)
	}
	if len(outcomes) == 0 {
		return success()
	}
	accepted, err := s.runs.FinishAttempts(ctx, outcomes)
	if err != nil {
		s.log.Error("XXL-JOB callback", "err", err)
		return failure("internal error; see the admin log")
	}
	for i, ok := range accepted {
		if !ok {
			s.log.Info("late XXL-JOB callback for a superseded attempt acknowledged and ignored", "log_id", outcomes[i].Token, "status", outcomes[i].Status)
			continue
		}
		s.forgetIdle(outcomes[i].Token)
		s.kickHeld(outcomes[i].ExecutorID) // the next slot of the handler may go
	}
	return success()
}
