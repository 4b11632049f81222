package xxljob_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/shardjob/shardjob/admin/xxljob"
)

// fakeExecutor is a test-only XXL-JOB executor, written from the protocol
// description: it registers with the admin, answers beat, idleBeat, run,
// kill and log, and calls back results. What a run does depends on its
// executorHandler:
//
//	ok      calls back success
//	fail    calls back handleCode 500 "boom"
//	silent  accepts the run and never calls back
//	hold    accepts the run and holds it until release or kill
//	missing refuses the run: handler not found
type fakeExecutor struct {
	t        *testing.T
	app      string
	token    string
	adminURL string
	srv      *httptest.Server
	http     *http.Client

	mu     sync.Mutex
	also   map[string]bool               // tokens accepted besides token
	runs   []xxljob.TriggerParam         // every run call accepted, in order
	held   map[int64]xxljob.TriggerParam // logId → held run
	kills  []int64                       // job ids
	beats  int
	logs   []xxljob.LogParam
	closed bool
	wg     sync.WaitGroup // callbacks in flight
}

func newFakeExecutor(t *testing.T, adminURL, app, token string) *fakeExecutor {
	f := &fakeExecutor{t: t, app: app, token: token, adminURL: adminURL, held: map[int64]xxljob.TriggerParam{},
		http: &http.Client{Timeout: 10 * time.Second}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /beat", f.handle(func([]byte) xxljob.ReturnT {
		f.beats++
		return ok(nil)
	}))
	mux.HandleFunc("POST /idleBeat", f.handle(func(body []byte) xxljob.ReturnT {
		var p xxljob.IdleBeatParam
		_ = json.Unmarshal(body, &p)
		for _, r := range f.held {
			if r.JobID == p.JobID {
				return fail("job thread is running or has trigger queue.")
			}
		}
		return ok(nil)
	}))
	mux.HandleFunc("POST /run", f.handle(f.run))
	mux.HandleFunc("POST /kill", f.handle(func(body []byte) xxljob.ReturnT {
		var p xxljob.KillParam
		_ = json.Unmarshal(body, &p)
		f.kills = append(f.kills, p.JobID)
		for id, r := range f.held {
			if r.JobID == p.JobID {
				delete(f.held, id)
				f.callbackLocked(r, 500, "job killed by the admin")
			}
		}
		return ok(nil)
	}))
	mux.HandleFunc("POST /log", f.handle(func(body []byte) xxljob.ReturnT {
		var p xxljob.LogParam
		_ = json.Unmarshal(body, &p)
		f.logs = append(f.logs, p)
		return ok(xxljob.LogResult{FromLineNum: p.FromLineNum, ToLineNum: p.FromLineNum + 1,
			LogContent: fmt.Sprintf("log of %d from line %d\nsecond line\n", p.LogID, p.FromLineNum), IsEnd: true})
	}))
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.Close)
	return f
}

func ok(content any) xxljob.ReturnT {
	rt := xxljob.ReturnT{Code: 200}
	if content != nil {
		rt.Content, _ = json.Marshal(content)
	}
	return rt
}

func fail(msg string) xxljob.ReturnT { return xxljob.ReturnT{Code: 500, Msg: &msg} }

// handle checks the access token and serialises the executor's state.
func (f *fakeExecutor) handle(fn func(body []byte) xxljob.ReturnT) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var buf bytes.Buffer
		_, _ = buf.ReadFrom(r.Body)
		var rt xxljob.ReturnT
		f.mu.Lock()
		if got := r.Header.Get(xxljob.TokenHeader); got != f.token && !f.also[got] {
			rt = fail("The access token is wrong.")
		} else {
			rt = fn(buf.Bytes())
		}
		f.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(rt)
	}
}

func (f *fakeExecutor) run(body []byte) xxljob.ReturnT {
	var p xxljob.TriggerParam
	if err := json.Unmarshal(body, &p); err != nil {
		return fail("bad trigger: " + err.Error())
	}
	if p.GlueType != xxljob.GlueBean {
		return fail("only BEAN glue in this executor")
	}
	switch p.ExecutorHandler {
	case "missing":
		return fail("job handler [" + p.ExecutorHandler + "] not found.")
	case "ok":
		f.callbackLocked(p, 200, "done")
	case "fail":
		f.callbackLocked(p, 500, "boom")
	case "hold":
		f.held[p.LogID] = p
	case "silent":
	}
	f.runs = append(f.runs, p)
	return ok(nil)
}

// callbackLocked calls the admin back in the background (as an executor's
// callback thread does).
func (f *fakeExecutor) callbackLocked(p xxljob.TriggerParam, code int, msg string) {
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		rt, err := f.Callback(f.token, xxljob.CallbackParam{LogID: p.LogID, LogDateTim: p.LogDateTime, HandleCode: code, HandleMsg: msg})
		if err != nil || rt.Code != 200 {
			f.t.Errorf("callback of logId %d: %v %+v", p.LogID, err, rt)
		}
	}()
}

// post sends an admin API call with token.
func (f *fakeExecutor) post(path, token string, body any) (xxljob.ReturnT, error) {
	data, _ := json.Marshal(body)
	req, err := http.NewRequest(http.MethodPost, f.adminURL+path, bytes.NewReader(data))
	if err != nil {
		return xxljob.ReturnT{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(xxljob.TokenHeader, token)
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
	return f.post("/api/registry", token, xxljob.RegistryParam{RegistryGroup: "EXECUTOR", RegistryKey: f.app, RegistryValue: f.Address()})
}

// RegisterRemove removes the registration.
func (f *fakeExecutor) RegisterRemove() (xxljob.ReturnT, error) {
	return f.post("/api/registryRemove", f.token, xxljob.RegistryParam{RegistryGroup: "EXECUTOR", RegistryKey: f.app, RegistryValue: f.Address()})
}

// Callback sends one callback item with token.
func (f *fakeExecutor) Callback(token string, p xxljob.CallbackParam) (xxljob.ReturnT, error) {
	return f.post("/api/callback", token, []xxljob.CallbackParam{p})
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

// Address is the executor's base URL as XXL-JOB executors register it.
func (f *fakeExecutor) Address() string { return f.srv.URL + "/" }

// Runs returns a copy of the accepted run calls.
func (f *fakeExecutor) Runs() []xxljob.TriggerParam {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]xxljob.TriggerParam(nil), f.runs...)
}

// Held returns the held runs.
func (f *fakeExecutor) Held() map[int64]xxljob.TriggerParam {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make(map[int64]xxljob.TriggerParam, len(f.held))
	for k, v := range f.held {
		out[k] = v
	}
	return out
}

// ReleaseAll calls back success for every held run.
func (f *fakeExecutor) ReleaseAll() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for id, r := range f.held {
		delete(f.held, id)
		f.callbackLocked(r, 200, "released")
	}
}

// Beats returns how many beat calls it answered.
func (f *fakeExecutor) Beats() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.beats
}

// Kills returns the job ids it was asked to kill.
func (f *fakeExecutor) Kills() []int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]int64(nil), f.kills...)
}

// Close stops the executor (it goes away: no beat, no callbacks) and waits
// for its callbacks in flight.
func (f *fakeExecutor) Close() {
	f.mu.Lock()
	closed := f.closed
	f.closed = true
	f.mu.Unlock()
	if !closed {
		f.srv.Close()
	}
	f.wg.Wait()
	f.http.CloseIdleConnections()
}
