package xxljob_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/shardjob/shardjob/admin/xxljob"
	"github.com/shardjob/shardjob/admin/xxljob/internal/goexec"
)

// fakeExecutor is a test-only XXL-JOB executor that behaves like the
// third-party Go client xxl-job-executor-go as observed against the admin
// (described in issue 18, not copied from it): it registers with the admin,
// answers beat, idleBeat, run, kill and log, and calls back results, and
//
//   - keeps one task per job id (not, as the client does, one task object
//     per handler name, which goexec emulates: newGoClient), as XXL-JOB's
//     Java executor does, so the admins of these tests list its apps in
//     Config.ConcurrentApps;
//   - runs ONE task per job id at a time: a run of a job id whose task is
//     running is refused with HTTP 200 and a callback-shaped array
//     [{"logId":…,"handleCode":500,"handleMsg":"There are tasks running"}]
//     (not queued, whatever the block strategy);
//   - refuses a run of a handler it does not have with the same array shape;
//   - calls back handleCode 200 for a task it killed or stopped at its
//     executorTimeout (the handler's context ends and it returns);
//   - answers a kill of a job id it does not run with a failure;
//   - with dupCallbacks, sends every callback twice (as the client does when
//     two jobs share a handler).
//
// It speaks one XXL-JOB protocol generation (version), as the executors of
// that version do:
//
//	2.4  ReturnT {code,msg,content}; /run; callbacks [{…"logDateTim"…}] to
//	     /api/callback; log requests read logDateTim
//	3.3  Response {code,msg,data}; /run; callbacks [{…"logDateTime"…}] to
//	     /xxl-job-admin/api/callback (the default context path); log
//	     requests read logDateTime and jobId
//	3.4  as 3.3, at the admin's root: /api/callback (3.4.1 dropped the
//	     context path)
//	3.5  as 3.4, but /trigger (a call of /run is refused "invalid request,
//	     uri-mapping(/run) not found."), the XXL-JOB-APPNAME header with
//	     its appname required on every call (refused otherwise) and sent on
//	     its own, callbacks {"callbackList":[…]}
//
// What a run does depends on its executorHandler:
//
//	ok      calls back success at once
//	fail    calls back handleCode 500 "boom"
//	work    runs for workFor (the workload), then calls back success; stopped
//	        at executorTimeout (success called back, like the client)
//	hold    runs until ReleaseAll or kill
//	silent  runs until killed and never calls back (a lost callback)
//	other   refused: handler not registered
type fakeExecutor struct {
	t        *testing.T
	version  string // "2.4", "3.3", "3.4" or "3.5"
	app      string
	token    string
	adminURL string
	srv      *httptest.Server
	http     *http.Client
	workFor  time.Duration // of handler "work"; default 2s

	mu           sync.Mutex
	also         map[string]bool        // tokens accepted besides token
	runs         []xxljob.TriggerParam  // every run call accepted, in order
	tasks        map[int64]*fakeTask    // job id → its running task
	refusals     map[string]int         // handleMsg → run calls refused with it
	kills        []int64                // job ids
	callbacks    []xxljob.CallbackParam // sent, duplicates included
	maxParallel  int                    // most tasks running at once
	dupCallbacks bool                   // send every callback twice
	beats        int
	logs         []xxljob.LogParam
	endpoints    map[string]int // calls by path, refused ones included
	closed       bool
	wg           sync.WaitGroup // callbacks in flight
}

// fakeTask is a task running on the fake executor.
type fakeTask struct {
	p     xxljob.TriggerParam
	timer *time.Timer // ends a "work" task (or stops it at its timeout)
}

// Refusal messages of the fake executor (array answers of run).
const (
	msgBusy       = "There are tasks running"
	msgNoHandler  = "Task not registered"
	msgNotRunning = "Task not running"
)

// newFakeExecutor returns an executor of the 2.4 generation.
func newFakeExecutor(t *testing.T, adminURL, app, token string) *fakeExecutor {
	return newFakeExecutorOf(t, "2.4", adminURL, app, token)
}

// newFakeExecutorOf returns an executor of an XXL-JOB version: "2.4",
// "3.3", "3.4" or "3.5".
func newFakeExecutorOf(t *testing.T, version, adminURL, app, token string) *fakeExecutor {
	f := &fakeExecutor{t: t, version: version, app: app, token: token, adminURL: adminURL, workFor: 2 * time.Second,
		tasks: map[int64]*fakeTask{}, refusals: map[string]int{}, endpoints: map[string]int{},
		http: &http.Client{Timeout: 10 * time.Second}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /beat", f.handle(func([]byte) any {
		f.beats++
		return f.ok(nil)
	}))
	mux.HandleFunc("POST /idleBeat", f.handle(func(body []byte) any {
		var p xxljob.IdleBeatParam
		_ = json.Unmarshal(body, &p)
		if f.tasks[p.JobID] != nil {
			return f.fail(msgBusy)
		}
		return f.ok(nil)
	}))
	runPath, otherPath := "/run", "/trigger"
	if version == "3.5" {
		runPath, otherPath = otherPath, runPath
	}
	mux.HandleFunc("POST "+runPath, f.handle(f.run))
	mux.HandleFunc("POST "+otherPath, f.handle(func([]byte) any {
		return f.fail("invalid request, uri-mapping(" + otherPath + ") not found.")
	}))
	mux.HandleFunc("POST /kill", f.handle(func(body []byte) any {
		var p xxljob.KillParam
		_ = json.Unmarshal(body, &p)
		f.kills = append(f.kills, p.JobID)
		task := f.tasks[p.JobID]
		if task == nil {
			return f.fail(msgNotRunning)
		}
		f.endLocked(task, 200, "task killed") // success, as the client reports a killed task
		return f.ok(nil)
	}))
	mux.HandleFunc("POST /log", f.handle(func(body []byte) any {
		// Each generation reads its own fields: 2.4 logDateTim, 3.x
		// logDateTime and jobId.
		var p xxljob.LogParam
		_ = json.Unmarshal(body, &p)
		if f.version == "2.4" {
			p.LogDateTime, p.JobID = 0, 0
		} else {
			p.LogDateTim = 0
		}
		f.logs = append(f.logs, p)
		return f.ok(xxljob.LogResult{FromLineNum: p.FromLineNum, ToLineNum: p.FromLineNum + 1,
			LogContent: fmt.Sprintf("log of %d from line %d\nsecond line\n", p.LogID, p.FromLineNum), IsEnd: true})
	}))
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.Close)
	return f
}

// ok is a success answer in the executor's envelope: ReturnT's content
// (2.4) or Response's data (3.x).
func (f *fakeExecutor) ok(payload any) xxljob.ReturnT {
	rt := xxljob.ReturnT{Code: 200}
	if payload != nil {
		data, _ := json.Marshal(payload)
		if f.version == "2.4" {
			rt.Content = data
		} else {
			rt.Data = data
		}
	}
	return rt
}

func (f *fakeExecutor) fail(msg string) xxljob.ReturnT { return xxljob.ReturnT{Code: 500, Msg: &msg} }

// refuse is the client's answer refusing a run: a callback-shaped array.
func (f *fakeExecutor) refuse(p xxljob.TriggerParam, msg string) []xxljob.CallbackParam {
	return []xxljob.CallbackParam{f.callbackOf(p, 500, msg)}
}

// callbackOf is a callback item as the executor's version spells it.
func (f *fakeExecutor) callbackOf(p xxljob.TriggerParam, code int, msg string) xxljob.CallbackParam {
	cb := xxljob.CallbackParam{LogID: p.LogID, HandleCode: code, HandleMsg: msg}
	if f.version == "2.4" {
		cb.LogDateTim = p.LogDateTime
	} else {
		cb.LogDateTime = p.LogDateTime
	}
	return cb
}

// adminPath is where the executor's version calls the admin API: 3.3 under
// XXL-JOB's default context path, the others at the root.
func (f *fakeExecutor) adminPath(op string) string {
	if f.version == "3.3" {
		return "/xxl-job-admin/api/" + op
	}
	return "/api/" + op
}

// handle checks the access token and serialises the executor's state; fn
// returns the answer to encode.
func (f *fakeExecutor) handle(fn func(body []byte) any) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var buf bytes.Buffer
		_, _ = buf.ReadFrom(r.Body)
		var answer any
		f.mu.Lock()
		f.endpoints[r.URL.Path]++
		switch got := r.Header.Get(xxljob.TokenHeader); {
		case got != f.token && !f.also[got]:
			answer = f.fail("The access token is wrong.")
		case f.version == "3.5" && r.Header.Get(xxljob.AppNameHeader) != f.app:
			answer = f.fail("The appname is wrong.")
		default:
			answer = fn(buf.Bytes())
		}
		f.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(answer)
	}
}

func (f *fakeExecutor) run(body []byte) any {
	var p xxljob.TriggerParam
	if err := json.Unmarshal(body, &p); err != nil {
		return f.fail("bad trigger: " + err.Error())
	}
	if p.GlueType != xxljob.GlueBean {
		return f.fail("only BEAN glue in this executor")
	}
	switch p.ExecutorHandler {
	case "ok", "fail", "work", "hold", "silent":
	default:
		f.refusals[msgNoHandler]++
		return f.refuse(p, msgNoHandler)
	}
	if f.tasks[p.JobID] != nil {
		f.refusals[msgBusy]++
		return f.refuse(p, msgBusy)
	}
	f.runs = append(f.runs, p)
	switch p.ExecutorHandler {
	case "ok":
		f.callbackLocked(p, 200, "done")
		return f.ok(nil)
	case "fail":
		f.callbackLocked(p, 500, "boom")
		return f.ok(nil)
	}
	task := &fakeTask{p: p}
	f.tasks[p.JobID] = task
	f.maxParallel = max(f.maxParallel, len(f.tasks))
	if p.ExecutorHandler == "work" {
		d, msg := f.workFor, "worked"
		if limit := time.Duration(p.ExecutorTimeout) * time.Second; limit > 0 && limit < d {
			d, msg = limit, "stopped at its timeout" // still success, as the client reports it
		}
		task.timer = time.AfterFunc(d, func() {
			f.mu.Lock()
			defer f.mu.Unlock()
			if f.tasks[p.JobID] == task {
				f.endLocked(task, 200, msg)
			}
		})
	}
	return f.ok(nil)
}

// endLocked ends a running task and calls back code (silent tasks never
// call back).
func (f *fakeExecutor) endLocked(task *fakeTask, code int, msg string) {
	delete(f.tasks, task.p.JobID)
	if task.timer != nil {
		task.timer.Stop()
	}
	if task.p.ExecutorHandler != "silent" {
		f.callbackLocked(task.p, code, msg)
	}
}

// callbackLocked calls the admin back in the background (as an executor's
// callback thread does), twice with dupCallbacks.
func (f *fakeExecutor) callbackLocked(p xxljob.TriggerParam, code int, msg string) {
	if f.closed {
		return
	}
	cb := f.callbackOf(p, code, msg)
	times := 1
	if f.dupCallbacks {
		times = 2
	}
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		for range times {
			f.mu.Lock()
			f.callbacks = append(f.callbacks, cb)
			f.mu.Unlock()
			rt, err := f.Callback(f.token, cb)
			if err != nil || rt.Code != 200 {
				f.t.Errorf("callback of logId %d: %v %+v", p.LogID, err, rt)
			}
		}
	}()
}

// post sends an admin API call with token (and, 3.5, the executor's
// appname).
func (f *fakeExecutor) post(path, token string, body any) (xxljob.ReturnT, error) {
	hdr := map[string]string{}
	if f.version == "3.5" {
		hdr[xxljob.AppNameHeader] = f.app
	}
	return f.postWith(path, token, hdr, body)
}

// postWith sends an admin API call with token and extra headers.
func (f *fakeExecutor) postWith(path, token string, hdr map[string]string, body any) (xxljob.ReturnT, error) {
	data, _ := json.Marshal(body)
	req, err := http.NewRequest(http.MethodPost, f.adminURL+path, bytes.NewReader(data))
	if err != nil {
		return xxljob.ReturnT{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(xxljob.TokenHeader, token)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	res, err := f.http.Do(req)
	if err != nil {
		return xxljob.ReturnT{}, err
	}
	defer res.Body.Close()
	var rt xxljob.ReturnT
	if res.StatusCode != http.StatusOK {
		return rt, fmt.Errorf("%s: HTTP %d", path, res.StatusCode)
	}
	err = json.NewDecoder(res.Body).Decode(&rt)
	return rt, err
}

// Register registers the executor with token (as its registry thread does
// every 30s).
func (f *fakeExecutor) Register(token string) (xxljob.ReturnT, error) {
	return f.post(f.adminPath("registry"), token, xxljob.RegistryParam{RegistryGroup: "EXECUTOR", RegistryKey: f.app, RegistryValue: f.Address()})
}

// RegisterRemove removes the registration.
func (f *fakeExecutor) RegisterRemove() (xxljob.ReturnT, error) {
	return f.post(f.adminPath("registryRemove"), f.token, xxljob.RegistryParam{RegistryGroup: "EXECUTOR", RegistryKey: f.app, RegistryValue: f.Address()})
}

// Callback sends one callback item with token, in the body of the
// executor's version: a bare array, or (3.5) {"callbackList": […]}.
func (f *fakeExecutor) Callback(token string, p xxljob.CallbackParam) (xxljob.ReturnT, error) {
	var body any = []xxljob.CallbackParam{p}
	if f.version == "3.5" {
		body = map[string]any{"callbackList": body}
	}
	return f.post(f.adminPath("callback"), token, body)
}

// AcceptAlso makes the executor accept token too (as if two apps had
// configured the same token).
func (f *fakeExecutor) AcceptAlso(token string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.also == nil {
		f.also = map[string]bool{}
	}
	f.also[token] = true
}

// DuplicateCallbacks makes the executor send every callback twice (on), or
// once.
func (f *fakeExecutor) DuplicateCallbacks(on bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.dupCallbacks = on
}

// Forget drops the task of logID without a callback (as a restarted
// executor has forgotten it).
func (f *fakeExecutor) Forget(logID int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for id, task := range f.tasks {
		if task.p.LogID == logID {
			if task.timer != nil {
				task.timer.Stop()
			}
			delete(f.tasks, id)
		}
	}
}

// Address is the executor's base URL as XXL-JOB executors register it.
func (f *fakeExecutor) Address() string { return f.srv.URL + "/" }

// Runs returns a copy of the accepted run calls.
func (f *fakeExecutor) Runs() []xxljob.TriggerParam {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]xxljob.TriggerParam(nil), f.runs...)
}

// Held returns the running hold and silent tasks by logId.
func (f *fakeExecutor) Held() map[int64]xxljob.TriggerParam {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[int64]xxljob.TriggerParam{}
	for _, task := range f.tasks {
		if task.p.ExecutorHandler == "hold" || task.p.ExecutorHandler == "silent" {
			out[task.p.LogID] = task.p
		}
	}
	return out
}

// ReleaseAll ends every hold task with success.
func (f *fakeExecutor) ReleaseAll() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, task := range f.tasks {
		if task.p.ExecutorHandler == "hold" {
			f.endLocked(task, 200, "released")
		}
	}
}

// Refusals returns how many run calls were refused with msg.
func (f *fakeExecutor) Refusals(msg string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.refusals[msg]
}

// Callbacks returns the callbacks sent, duplicates included.
func (f *fakeExecutor) Callbacks() []xxljob.CallbackParam {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]xxljob.CallbackParam(nil), f.callbacks...)
}

// MaxParallel returns the most tasks that ran at once.
func (f *fakeExecutor) MaxParallel() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.maxParallel
}

// Beats returns how many beat calls it answered.
func (f *fakeExecutor) Beats() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.beats
}

// Logs returns the log requests it answered, as its version read them.
func (f *fakeExecutor) Logs() []xxljob.LogParam {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]xxljob.LogParam(nil), f.logs...)
}

// Endpoint returns how many calls of path it got.
func (f *fakeExecutor) Endpoint(path string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.endpoints[path]
}

// Kills returns the job ids it was asked to kill.
func (f *fakeExecutor) Kills() []int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]int64(nil), f.kills...)
}

// Close stops the executor (it goes away: no beat, no callbacks, its tasks
// end silently) and waits for its callbacks in flight.
func (f *fakeExecutor) Close() {
	f.mu.Lock()
	closed := f.closed
	f.closed = true
	for _, task := range f.tasks {
		if task.timer != nil {
			task.timer.Stop()
		}
	}
	f.mu.Unlock()
	if !closed {
		f.srv.Close()
	}
	f.wg.Wait()
	f.http.CloseIdleConnections()
}

// jobOf returns the shardjob job of a run call (its jobId is per slot:
// xxljob.SlotJobID).
func jobOf(p xxljob.TriggerParam) int64 { return p.JobID / 1024 }

// newGoClient starts an executor that behaves like xxl-job-executor-go
// (package goexec: one task object per handler name, refusals as arrays)
// and registers it with the admin at adminURL.
func newGoClient(t *testing.T, adminURL, app, token string, work time.Duration) *goexec.Executor {
	t.Helper()
	e := goexec.New(goexec.Config{AdminURL: adminURL, App: app, Token: token, Work: work})
	srv := httptest.NewServer(e)
	e.SetAddress(srv.URL + "/")
	t.Cleanup(func() {
		srv.Close()
		e.Close()
	})
	rt, err := e.Register(context.Background())
	if err != nil || rt.Code != xxljob.CodeSuccess {
		t.Fatalf("register the Go-client executor: %v %s", err, rt.Message())
	}
	return e
}
