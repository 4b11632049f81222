package store

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/deploy/dev/testenv"
	sqlfiles "github.com/shardjob/shardjob/sql"
)

// TestHintReadsHaveATimeLimitOnMariaDB: on MariaDB the scheduler's hint
// reads, and only those, carry the statement time limit, and the server
// takes them (the store answers them).
func TestHintReadsHaveATimeLimitOnMariaDB(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, err := Open(ctx, Config{Driver: sqlfiles.MySQL, DSN: testenv.MySQL(t), HintTimeLimit: 1500 * time.Millisecond})
	require.NoError(t, err)
	defer s.Close()
	_, err = s.Migrate(ctx)
	require.NoError(t, err)
	plain, err := loadQueries(sqlfiles.MySQL)
	require.NoError(t, err)
	for i := range s.q {
		if slices.Contains(hintQueries, query(i)) {
			require.Equal(t, "SET STATEMENT max_statement_time=1.5 FOR "+plain[i], s.q[i])
		} else {
			require.Equal(t, plain[i], s.q[i], "query %d is no hint read", i)
			require.False(t, strings.HasPrefix(s.q[i], "SET STATEMENT"))
		}
	}
	_, err = s.NextDue(ctx)
	require.NoError(t, err)
	_, err = s.NextDueIn(ctx, []int{1, 2, 3})
	require.NoError(t, err)
	_, err = s.CountDueIn(ctx, []int{1, 2, 3}, time.Now().UnixMilli(), 10)
	require.NoError(t, err)
	_, err = s.NextPauseEndIn(ctx, []int{1, 2, 3})
	require.NoError(t, err)

	// Without a limit, nothing is rewritten.
	none, err := Open(ctx, Config{Driver: sqlfiles.MySQL, DSN: testenv.MySQL(t), HintTimeLimit: -1})
	require.NoError(t, err)
	defer none.Close()
	require.Equal(t, []string(plain), []string(none.q))
}
