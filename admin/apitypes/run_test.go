package apitypes

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRunStatusPhrase (issue 30): sentences about a run read as English
// ("run 15 has already succeeded"), not "run 15 is succeeded".
func TestRunStatusPhrase(t *testing.T) {
	t.Parallel()
	for status, want := range map[string]string{
		"pending": "is pending", "running": "is running", "succeeded": "has already succeeded",
		"failed": "has already failed", "partially_failed": "has already partially failed",
		"cancelled": "was cancelled", "skipped": "was skipped",
	} {
		require.Equal(t, want, RunStatusPhrase(status), status)
	}
}
