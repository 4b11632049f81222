package names_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/sdk/names"
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

// TestProblem (issue 30): a name that was given but is not valid is not
// called "required": the message quotes it and says which characters are
// allowed.
func TestProblem(t *testing.T) {
	t.Parallel()
	require.Empty(t, names.Problem("billing"))
	require.Equal(t, "required; "+names.Rule, names.Problem(""))
	require.Equal(t, `"我的 job" is not a valid name: use 1-64 ASCII letters (a-z, A-Z), digits, '.', '_' or '-', starting with a letter or digit (no spaces)`,
		names.Problem("我的 job"))
}
