package api_test

import (
	"log/slog"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/api"
	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/sdk/protocol"
	sqlfiles "github.com/shardjob/shardjob/sql"
)

// BenchmarkSignedRequests measures a signed heartbeat and a signed results
// request (128 results, as executors batch them) through the API on
// MariaDB, with the nonces kept in the replica's memory (one replica) and
// in the database (several replicas: store.Nonces), one request after the
// other over loopback HTTP. The difference is the cost of the shared replay
// check per request.
func BenchmarkSignedRequests(b *testing.B) {
	st := sharedDatabase(b, sqlfiles.MySQL, 1)[0]
	secret := protocol.NewSecret()
	results := make([]protocol.SlotResult, 128)
	for i := range results {
		results[i] = protocol.SlotResult{Token: int64(1_000_000 + i), Status: protocol.SlotSucceeded, Processed: 10}
	}
	for _, mode := range []struct {
		name   string
		nonces protocol.NonceStore
	}{{"memory", nil}, {"database", store.NewNonces(st, nil, nil)}} {
		srv := replica(b, api.Config{Store: st, ExecutorSecret: secret, Nonces: mode.nonces, Logger: slog.New(slog.DiscardHandler)})
		hb := protocol.HeartbeatRequest{InstanceID: "bench-1", App: "bench", Address: "http://127.0.0.1:9", Capacity: 4, Handlers: []string{"h"}}
		b.Run(mode.name+"/heartbeat", func(b *testing.B) {
			for range b.N {
				code, out := sign(b, secret, protocol.PathHeartbeat, hb).sendTo(b, srv)
				require.Equal(b, http.StatusOK, code, out)
			}
		})
		b.Run(mode.name+"/results-128", func(b *testing.B) {
			req := protocol.ResultsRequest{InstanceID: "bench-1", Results: results}
			for range b.N {
				code, out := sign(b, secret, protocol.PathResults, req).sendTo(b, srv)
				require.Equal(b, http.StatusOK, code, out)
			}
		})
	}
}
