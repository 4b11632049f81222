package placement_test

import (
	"testing"

	"github.com/shardjob/shardjob/admin/jobdef"
	"github.com/shardjob/shardjob/admin/placement"
	"github.com/stretchr/testify/require"
)

func TestMaxSlotsMatchesJobDefinition(t *testing.T) {
	t.Parallel()
	require.Equal(t, jobdef.MaxSlots, placement.MaxSlots)
}
