package records

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/sdk"
)

// The executor feeds its dedup batch histogram as a records.Observer.
var _ Observer = (*sdk.Executor)(nil)

type batchLog struct {
	mu   sync.Mutex
	keys []int
}

func (b *batchLog) ObserveDedupBatch(keys int, d time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if d < 0 {
		panic("negative duration")
	}
	b.keys = append(b.keys, keys)
}

// TestObserverSeesEveryClaim: Config.Observer is told of each batch claimed
// in the dedup table, with its size.
func TestObserverSeesEveryClaim(t *testing.T) {
	t.Parallel()
	for _, mode := range modes {
		t.Run(mode.String(), func(t *testing.T) {
			t.Parallel()
			eachDialect(t, func(t *testing.T, e *env) {
				obs := &batchLog{}
				p := e.processor(t, Config{Mode: mode, Uncertain: Skip, BatchSize: 100, Concurrency: 2, Observer: obs})
				res, err := p.Process(context.Background(), newTask(8, 200, 0, 1), KeysOf(keys(250)), handlerFor(e, mode, 1, nil))
				require.NoError(t, err)
				require.Equal(t, int64(250), res.Processed)
				obs.mu.Lock()
				defer obs.mu.Unlock()
				total := 0
				for _, n := range obs.keys {
					total += n
				}
				require.GreaterOrEqual(t, len(obs.keys), 3, "one claim per batch of at most 100 keys")
				require.GreaterOrEqual(t, total, 250, "every key was claimed in an observed batch (a retried claim counts again)")
			})
		})
	}
}
