package fielderr_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/internal/fielderr"
)

func TestFormat(t *testing.T) {
	t.Parallel()
	require.Equal(t, "invalid job: ", fielderr.Format("invalid job", nil))
	require.Equal(t, "invalid workflow: edges[2].to: unknown; name: required; nodes[0].key: duplicate",
		fielderr.Format("invalid workflow", map[string]string{"nodes[0].key": "duplicate", "name": "required", "edges[2].to": "unknown"}))
}
