package store_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/store"
	"github.com/shardjob/shardjob/admin/store/storetest"
)

// BenchmarkNonceClaim measures what the replay check adds to every signed
// executor request when several admin replicas share the nonces: one
// insert into executor_nonce (and, every 5s per replica, a purge). serial:
// one request after the other; parallel: as many as GOMAXPROCS×4 at once.
func BenchmarkNonceClaim(b *testing.B) {
	for _, d := range storetest.Dialects {
		b.Run(d, func(b *testing.B) {
			st := storetest.Open(b, d)
			n := store.NewNonces(st, nil, nil)
			ctx := context.Background()
			claim := func() {
				var raw [16]byte
				_, _ = rand.Read(raw[:])
				ok, err := n.Claim(ctx, hex.EncodeToString(raw[:]), time.Now().Add(30*time.Second))
				require.NoError(b, err)
				require.True(b, ok)
			}
			b.Run("serial", func(b *testing.B) {
				for range b.N {
					claim()
				}
			})
			b.Run("parallel", func(b *testing.B) {
				b.SetParallelism(4)
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						claim()
					}
				})
			})
		})
	}
}

// BenchmarkLiveExecutorsAt measures the address check a heartbeat makes (is
// the address a live XXL-JOB executor's?) among 1000 executors.
func BenchmarkLiveExecutorsAt(b *testing.B) {
	for _, d := range storetest.Dialects {
		b.Run(d, func(b *testing.B) {
			st := storetest.Open(b, d)
			ctx := context.Background()
			for i := range 1000 {
				_, err := st.Heartbeat(ctx, store.ExecutorInfo{InstanceID: fmt.Sprintf("i-%d", i), App: "a", Address: fmt.Sprintf("http://10.0.%d.%d:9090", i/250, i%250), Capacity: 1})
				require.NoError(b, err)
			}
			b.ResetTimer()
			for i := range b.N {
				live, err := st.LiveExecutorsAt(ctx, fmt.Sprintf("http://10.0.%d.%d:9090", i%4, i%250), "other", 3600000)
				require.NoError(b, err)
				require.Len(b, live, 1)
			}
		})
	}
}
