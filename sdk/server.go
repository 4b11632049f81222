package sdk

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/shardjob/shardjob/sdk/protocol"
)

// routes is the executor's HTTP API, called by the admin.
func (e *Executor) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc(protocol.PathAssign, e.serveAssign)
	mux.HandleFunc(protocol.PathCancel, e.serveCancel)
	mux.HandleFunc(protocol.PathRelease, e.serveRelease)
	mux.HandleFunc(protocol.PathHealth, e.serveHealth)
	mux.HandleFunc("/healthz", e.serveHealthz) // metrics.go
	mux.HandleFunc("/readyz", e.serveReadyz)
	if h := e.metricsHandler(); h != nil {
		mux.Handle("GET /metrics", h)
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "no such endpoint: "+r.URL.Path)
	})
	return mux
}

// serveAssign accepts pushed assignments. It answers with the tokens the
// executor holds (see accept); 503 while stopping.
func (e *Executor) serveAssign(w http.ResponseWriter, r *http.Request) {
	var req protocol.AssignRequest
	if !e.readSigned(w, r, &req) {
		return
	}
	e.mu.Lock()
	st := e.state
	e.mu.Unlock()
	if st != stateRunning {
		writeError(w, http.StatusServiceUnavailable, "executor is "+st.String()+": assign the slots to another executor")
		return
	}
	if protocol.Expired(req.ValidUntilMS, time.Now()) {
		n := 0
		for _, a := range req.Assignments {
			n += len(a.Attempts)
		}
		e.mu.Lock()
		e.stats.Refused += uint64(n)
		e.mu.Unlock()
		e.log.Warn("refusing a push read after it expired (was this process frozen?): none of it started; the admin places the slots again",
			"slots", n, "valid_until", time.UnixMilli(req.ValidUntilMS).UTC().Format(time.RFC3339Nano))
		writeError(w, http.StatusGone, "assignment expired at "+time.UnixMilli(req.ValidUntilMS).UTC().Format(time.RFC3339Nano)+": not started; the admin may have moved these slots")
		return
	}
	accepted, started, seq := e.accept(req.Assignments, "push")
	writeJSON(w, http.StatusOK, protocol.AssignResponse{Accepted: accepted, Started: started, AcceptSeq: seq})
}

// serveCancel cancels tokens; it works while stopping too.
func (e *Executor) serveCancel(w http.ResponseWriter, r *http.Request) {
	var req protocol.CancelRequest
	if !e.readSigned(w, r, &req) {
		return
	}
	writeJSON(w, http.StatusOK, protocol.CancelResponse{Cancelled: e.cancel(req.Tokens, req.Reason, "push")})
}

// serveRelease gives back queued, unstarted tokens (work stealing); it works
// while stopping too (a stopping executor has handed back its queue already).
func (e *Executor) serveRelease(w http.ResponseWriter, r *http.Request) {
	var req protocol.ReleaseRequest
	if !e.readSigned(w, r, &req) {
		return
	}
	writeJSON(w, http.StatusOK, protocol.ReleaseResponse{Released: e.release(req.Tokens, req.Reason)})
}

// serveHealth is unauthenticated (probes call it) and reveals only the state
// and the instance id.
func (e *Executor) serveHealth(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		writeError(w, http.StatusMethodNotAllowed, r.Method+" "+r.URL.Path+": use GET")
		return
	}
	e.mu.Lock()
	st := e.state
	e.mu.Unlock()
	resp := protocol.HealthResponse{Status: protocol.HealthOK, InstanceID: e.cfg.InstanceID}
	code := http.StatusOK
	if st != stateRunning {
		resp.Status = protocol.HealthDraining
		code = http.StatusServiceUnavailable
	}
	writeJSON(w, code, resp)
}

// readSigned checks the method, reads and verifies a signed request and
// decodes its JSON body into v. On failure it writes the error response and
// returns false: 401 for a request that is unsigned, badly signed, outside
// the clock window or replayed.
func (e *Executor) readSigned(w http.ResponseWriter, r *http.Request, v any) bool {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		writeError(w, http.StatusMethodNotAllowed, r.Method+" "+r.URL.Path+": use POST")
		return false
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxRequestBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("body larger than %d bytes", tooBig.Limit))
			return false
		}
		writeError(w, http.StatusBadRequest, "read body: "+err.Error())
		return false
	}
	if err := e.verifier.Verify(r.Method, r.URL.Path, r.Header, body); err != nil {
		e.log.Warn("refused unauthenticated request", "path", r.URL.Path, "remote", r.RemoteAddr, "err", err)
		writeError(w, http.StatusUnauthorized, err.Error())
		return false
	}
	if err := json.Unmarshal(body, v); err != nil {
		writeError(w, http.StatusBadRequest, "decode "+r.URL.Path+" request: "+err.Error())
		return false
	}
	return true
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, protocol.Error{Error: msg})
}
