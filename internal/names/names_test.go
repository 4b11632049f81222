package names_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/internal/names"
)

func TestValid(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{"a", "billing", "Billing.v2", "9_lives", "a-b_c.d", strings.Repeat("x", 64)} {
		require.True(t, names.Valid(ok), ok)
	}
	for _, bad := range []string{"", ".hidden", "-x", "_x", "a b", "a/b", "é", strings.Repeat("x", 65), "a\n"} {
		require.False(t, names.Valid(bad), bad)
	}
}
