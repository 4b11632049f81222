// Package goexec is a test executor that behaves like the third-party Go
// client of XXL-JOB, xxl-job-executor-go, as its source reads (described in
// the admin's docs/migration.md, not copied from it). Its one flaw that
// matters to the admin is kept on purpose:
//
//   - it keeps ONE task object per handler name: a run takes the handler's
//     object, sets its job id, params and cancel function and starts it; a
//     second run of the same handler (another job id) overwrites them while
//     the first still runs. Whichever ends, its callback is built from the
//     object as it is then: both callbacks carry the second run's logId, and
//     each removes the object's current job id from the running list, so
//     the first run's job id stays listed as running for ever;
//   - a run of a job id listed as running is refused with HTTP 200 and a
//     callback-shaped array [{"logId":…,"handleCode":500,"handleMsg":
//     "There are tasks running"}] (COVER_EARLY instead cancels the listed
//     task), and so is a run of an unknown handler ("Task not registered");
//   - idleBeat answers code 500 while the job id is listed as running, 200
//     otherwise; kill cancels the listed task (the object's current cancel
//     function) and unlists the job id;
//   - a callback that does not reach the admin is dropped, not sent again
//     (LoseCallbacks emulates that).
//
// Handlers: "work" runs for Config.Work (stopped by its context: kill, or
// executorTimeout), "ok" ends at once. It serves the XXL-JOB executor API
// (ServeHTTP) and registers with the admin (Register, Run).
package goexec

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/shardjob/shardjob/admin/xxljob"
)

// Config of an Executor.
type Config struct {
	AdminURL string        // the admin's base URL (xxl.job.admin.addresses)
	App      string        // the appname (registryKey)
	Token    string        // the access token
	Address  string        // the executor's own base URL, registered
	Work     time.Duration // how long handler "work" runs; default 2s
	// Log, when set, gets a line per run taken ("run job_id=… log_id=…")
	// and per callback ("callback log_id=… delivered=…").
	Log io.Writer
}

// Executor is the emulated xxl-job-executor-go executor.
type Executor struct {
	cfg  Config
	http *http.Client

	mu        sync.Mutex
	reg       map[string]*task // handler name → its one task object
	runList   map[int64]*task  // job id → task object, as the client lists them
	runs      []xxljob.TriggerParam
	callbacks []xxljob.CallbackParam // sent (lost ones included)
	lose      int                    // callbacks still to lose
	busyIdle  int                    // idleBeat calls answered busy
	active    map[string]int         // handler → executions going on
	maxActive map[string]int
	closed    bool
	wg        sync.WaitGroup
}

// task is the client's task object: one per handler name.
type task struct {
	id     int64
	param  xxljob.TriggerParam
	ctx    context.Context
	cancel context.CancelFunc
}

// New returns an Executor with the handlers "work" and "ok".
func New(cfg Config) *Executor {
	if cfg.Work <= 0 {
		cfg.Work = 2 * time.Second
	}
	return &Executor{cfg: cfg, http: &http.Client{Timeout: 10 * time.Second},
		reg:     map[string]*task{"work": {}, "ok": {}},
		runList: map[int64]*task{}, active: map[string]int{}, maxActive: map[string]int{}}
}

// SetAddress sets the base URL it registers (once it listens).
func (e *Executor) SetAddress(addr string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.cfg.Address = addr
}

// ServeHTTP serves beat, idleBeat, run, kill and log.
func (e *Executor) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	var answer any
	e.mu.Lock()
	switch {
	case r.Header.Get(xxljob.TokenHeader) != e.cfg.Token:
		answer = fail("The access token is wrong.")
	case r.URL.Path == "/beat":
		answer = ok()
	case r.URL.Path == "/idleBeat":
		var p xxljob.IdleBeatParam
		_ = json.Unmarshal(body, &p)
		answer = ok()
		if e.runList[p.JobID] != nil {
			answer = fail("task is busy")
			e.busyIdle++
		}
	case r.URL.Path == "/run":
		answer = e.runLocked(body)
	case r.URL.Path == "/kill":
		var p xxljob.KillParam
		_ = json.Unmarshal(body, &p)
		answer = fail("task not running")
		if t := e.runList[p.JobID]; t != nil {
			t.cancel()
			delete(e.runList, p.JobID)
			answer = ok()
		}
	case r.URL.Path == "/log":
		answer = ok()
	default:
		w.WriteHeader(http.StatusNotFound)
		e.mu.Unlock()
		return
	}
	e.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(answer)
}

func (e *Executor) runLocked(body []byte) any {
	var p xxljob.TriggerParam
	if err := json.Unmarshal(body, &p); err != nil {
		return refuse(p, "params err")
	}
	t := e.reg[p.ExecutorHandler]
	if t == nil {
		return refuse(p, "Task not registered")
	}
	if old := e.runList[p.JobID]; old != nil {
		if p.ExecutorBlockStrategy != "COVER_EARLY" {
			return refuse(p, "There are tasks running")
		}
		old.cancel()
		delete(e.runList, old.id)
	}
	// The flaw: the handler's one object takes this run's id, params and
	// cancel function, whatever of it still runs.
	if p.ExecutorTimeout > 0 {
		t.ctx, t.cancel = context.WithTimeout(context.Background(), time.Duration(p.ExecutorTimeout)*time.Second)
	} else {
		t.ctx, t.cancel = context.WithCancel(context.Background())
	}
	t.id, t.param = p.JobID, p
	e.runList[p.JobID] = t
	e.runs = append(e.runs, p)
	e.logf("run job_id=%d log_id=%d handler=%s", p.JobID, p.LogID, p.ExecutorHandler)
	e.active[p.ExecutorHandler]++
	e.maxActive[p.ExecutorHandler] = max(e.maxActive[p.ExecutorHandler], e.active[p.ExecutorHandler])
	ctx, handler := t.ctx, p.ExecutorHandler
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		msg := "ok"
		if handler == "work" {
			timer := time.NewTimer(e.cfg.Work)
			select {
			case <-timer.C:
				msg = "worked"
			case <-ctx.Done():
				timer.Stop()
				msg = "stopped: " + ctx.Err().Error()
			}
		}
		e.finish(t, handler, msg)
	}()
	return ok()
}

// finish is the client's callback: built from the task object as it is now.
func (e *Executor) finish(t *task, handler, msg string) {
	e.mu.Lock()
	e.active[handler]--
	delete(e.runList, t.id) // the object's current job id, not necessarily this run's
	cb := xxljob.CallbackParam{LogID: t.param.LogID, LogDateTim: t.param.LogDateTime, HandleCode: xxljob.CodeSuccess, HandleMsg: msg}
	e.callbacks = append(e.callbacks, cb)
	lost := e.lose > 0 || e.closed
	if e.lose > 0 {
		e.lose--
	}
	e.mu.Unlock()
	if lost {
		e.logf("callback log_id=%d delivered=false", cb.LogID)
		return // the client logs a failed callback and drops it
	}
	rt, err := e.post("/api/callback", []xxljob.CallbackParam{cb})
	e.logf("callback log_id=%d delivered=%t", cb.LogID, err == nil && rt.Code == xxljob.CodeSuccess)
}

// logf writes a line to Config.Log.
func (e *Executor) logf(format string, args ...any) {
	if e.cfg.Log != nil {
		_, _ = fmt.Fprintf(e.cfg.Log, format+"\n", args...)
	}
}

// Register registers it with the admin once; it returns the admin's answer.
func (e *Executor) Register(ctx context.Context) (xxljob.ReturnT, error) {
	e.mu.Lock()
	p := xxljob.RegistryParam{RegistryGroup: "EXECUTOR", RegistryKey: e.cfg.App, RegistryValue: e.cfg.Address}
	e.mu.Unlock()
	return e.postCtx(ctx, "/api/registry", p)
}

// Run registers it every interval until ctx ends (as the client's registry
// goroutine does every 20 s).
func (e *Executor) Run(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		_, _ = e.Register(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (e *Executor) post(path string, body any) (xxljob.ReturnT, error) {
	return e.postCtx(context.Background(), path, body)
}

func (e *Executor) postCtx(ctx context.Context, path string, body any) (xxljob.ReturnT, error) {
	var rt xxljob.ReturnT
	data, err := json.Marshal(body)
	if err != nil {
		return rt, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(e.cfg.AdminURL, "/")+path, bytes.NewReader(data))
	if err != nil {
		return rt, err
	}
	req.Header.Set("Content-Type", "application/json;charset=UTF-8")
	req.Header.Set(xxljob.TokenHeader, e.cfg.Token)
	res, err := e.http.Do(req)
	if err != nil {
		return rt, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return rt, fmt.Errorf("%s: HTTP %d", path, res.StatusCode)
	}
	err = json.NewDecoder(res.Body).Decode(&rt)
	return rt, err
}

// LoseCallbacks makes the next n callbacks fail to reach the admin.
func (e *Executor) LoseCallbacks(n int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.lose = n
}

// Runs returns the run calls it accepted.
func (e *Executor) Runs() []xxljob.TriggerParam {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]xxljob.TriggerParam(nil), e.runs...)
}

// Callbacks returns the callbacks it made, lost ones included.
func (e *Executor) Callbacks() []xxljob.CallbackParam {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]xxljob.CallbackParam(nil), e.callbacks...)
}

// BusyIdleBeats returns how many idleBeat calls it answered busy.
func (e *Executor) BusyIdleBeats() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.busyIdle
}

// MaxActive returns the most executions of a handler at once.
func (e *Executor) MaxActive(handler string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.maxActive[handler]
}

// Listed returns the job ids it lists as running.
func (e *Executor) Listed() []int64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]int64, 0, len(e.runList))
	for id := range e.runList {
		out = append(out, id)
	}
	return out
}

// Close cancels its tasks, stops calling back and waits for them.
func (e *Executor) Close() {
	e.mu.Lock()
	e.closed = true
	for _, t := range e.reg {
		if t.cancel != nil {
			t.cancel()
		}
	}
	e.mu.Unlock()
	e.wg.Wait()
	e.http.CloseIdleConnections()
}

func ok() xxljob.ReturnT { return xxljob.ReturnT{Code: xxljob.CodeSuccess} }

func fail(msg string) xxljob.ReturnT { return xxljob.ReturnT{Code: 500, Msg: &msg} }

// refuse is the client's refusal of a run: a callback-shaped array.
func refuse(p xxljob.TriggerParam, msg string) []xxljob.CallbackParam {
	return []xxljob.CallbackParam{{LogID: p.LogID, LogDateTim: p.LogDateTime, HandleCode: 500, HandleMsg: msg}}
}

// Address returns the base URL it registers.
func (e *Executor) Address() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.cfg.Address
}
