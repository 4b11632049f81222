package server

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestFirstStartBannerPointsAtTheUserMenu (issue 30): the first-start
// banner sends the operator to where the console has the Password button
// (the user menu, web/static/index.html #user-menu), not to the top bar.
func TestFirstStartBannerPointsAtTheUserMenu(t *testing.T) {
	for _, file := range []string{"", filepath.Join(t.TempDir(), "admin.password")} {
		var out bytes.Buffer
		require.NoError(t, announcePassword(&out, "pw-1234567890", file))
		require.Contains(t, out.String(), "Change it in the console: open the user menu (your name, top right), then Password.")
		require.NotContains(t, out.String(), "top bar")
	}
}
