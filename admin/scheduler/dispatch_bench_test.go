package scheduler_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/apitypes"
	"github.com/shardjob/shardjob/admin/dispatch"
	"github.com/shardjob/shardjob/admin/jobdef"
	"github.com/shardjob/shardjob/admin/scheduler"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/admin/store/storetest"
	"github.com/shardjob/shardjob/sdk/protocol"
	sqlfiles "github.com/shardjob/shardjob/sql"
)

// BenchmarkDispatch measures the cost of starting a 1024-slot run on 8
// executors with the real signed HTTP client against MariaDB: slot
// placement, the attempts' insert and one push per executor. Side by side,
// the naive way: one push per slot (XXL-JOB's sharding broadcast sends one
// trigger per shard).
func BenchmarkDispatch(b *testing.B) {
	const slots, executors = 1024, 8
	ctx := context.Background()
	secret := protocol.NewSecret()
	verifier := protocol.NewVerifier(secret, time.Minute, nil)
	var requests, bytes atomic.Int64
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		requests.Add(1)
		bytes.Add(int64(len(body)))
		_ = verifier.Verify(r.Method, r.URL.Path, r.Header, body)
		var req protocol.AssignRequest
		_ = json.Unmarshal(body, &req)
		var resp protocol.AssignResponse
		for _, a := range req.Assignments {
			for _, s := range a.Attempts {
				resp.Accepted = append(resp.Accepted, s.Token)
			}
		}
		_ = json.NewEncoder(w).Encode(resp)
	})
	var urls []string
	for range executors {
		srv := httptest.NewServer(handler)
		b.Cleanup(srv.Close)
		urls = append(urls, srv.URL)
	}
	push, err := dispatch.New(secret, 10*time.Second)
	require.NoError(b, err)

	b.Run("one-request-per-executor", func(b *testing.B) {
		st := storetest.Open(b, sqlfiles.MySQL)
		_, err := st.ClaimEpoch(ctx, 1, "bench")
		require.NoError(b, err)
		for i, u := range urls {
			_, err := st.Heartbeat(ctx, store.ExecutorInfo{InstanceID: fmt.Sprintf("ex-%d", i), App: "bench", Address: u, Capacity: 128})
			require.NoError(b, err)
		}
		v, err := jobdef.Validate(apitypes.JobSpec{JobDef: apitypes.JobDef{App: "bench", Name: "wide", Handler: "h", Cron: "@yearly", SlotCount: slots, Params: "records=1000"}}, time.Now())
		require.NoError(b, err)
		jobID, err := st.CreateJob(ctx, v.Job)
		require.NoError(b, err)
		s, err := scheduler.New(scheduler.Config{ID: "bench"}, st, push)
		require.NoError(b, err)
		requests.Store(0)
		bytes.Store(0)
		var elapsed time.Duration
		for i := range b.N {
			b.StopTimer()
			_, _, err := st.InsertRun(ctx, 1, store.NewRun{JobID: jobID, ScheduledAt: int64(i + 1), TriggerKind: store.TriggerManual, Status: store.RunPending, SlotCount: slots})
			require.NoError(b, err)
			b.StartTimer()
			start := time.Now()
			require.NoError(b, s.AssignPending(ctx, 1))
			s.WaitPushes()
			elapsed += time.Since(start)
		}
		b.ReportMetric(float64(requests.Load())/float64(b.N), "requests/run")
		b.ReportMetric(float64(bytes.Load())/float64(b.N)/1024, "KiB/run")
		b.ReportMetric(float64(elapsed.Milliseconds())/float64(b.N), "ms/run")
	})

	b.Run("naive-one-request-per-slot", func(b *testing.B) {
		requests.Store(0)
		bytes.Store(0)
		start := time.Now()
		for range b.N {
			for slot := range slots {
				req := protocol.AssignRequest{Assignments: []protocol.RunAssignment{{RunID: 1, JobID: 1, JobName: "wide", Handler: "h",
					Params: "records=1000", SlotCount: slots, Attempts: []protocol.SlotAttempt{{Slot: slot, Token: int64(slot + 1), Attempt: 1}}}}}
				_, err := push.Assign(ctx, urls[slot%executors], req)
				require.NoError(b, err)
			}
		}
		b.ReportMetric(float64(requests.Load())/float64(b.N), "requests/run")
		b.ReportMetric(float64(bytes.Load())/float64(b.N)/1024, "KiB/run")
		b.ReportMetric(float64(time.Since(start).Milliseconds())/float64(b.N), "ms/run")
	})
}
