package api_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/admin/api"
	"github.com/shardjob/shardjob/admin/auth"
	"github.com/shardjob/shardjob/admin/store/storetest"
	"github.com/shardjob/shardjob/sdk/protocol"
	sqlfiles "github.com/shardjob/shardjob/sql"
)

// TestInitialPasswordFileGoesAtFirstUse: the file holding the first-start
// password of user admin stays while others sign in, and goes when admin
// signs in (or, before that, when an admin changes admin's password).
func TestInitialPasswordFileGoesAtFirstUse(t *testing.T) {
	t.Parallel()
	for _, how := range []string{"login", "changed by another admin"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			file := filepath.Join(t.TempDir(), "admin.password")
			require.NoError(t, os.WriteFile(file, []byte("x\n"), 0o600))
			st := storetest.Open(t, sqlfiles.SQLite)
			h, err := api.New(api.Config{Store: st, ExecutorSecret: protocol.NewSecret(), InitialPasswordFile: file})
			require.NoError(t, err)
			srv := httptest.NewServer(h)
			t.Cleanup(srv.Close)
			e := &env{t: t, st: st, srv: srv}
			e.user(auth.BootstrapUser, auth.RoleAdmin)
			e.user("root2", auth.RoleAdmin)

			other := e.token("root2")
			require.FileExists(t, file, "another user's login keeps the file")
			switch how {
			case "login":
				e.token(auth.BootstrapUser)
			default:
				var list struct {
					Users []struct {
						ID       int64
						Username string
					}
				}
				require.Equal(t, http.StatusOK, e.call("GET", "/api/v1/users", other, nil, &list))
				var id int64
				for _, u := range list.Users {
					if u.Username == auth.BootstrapUser {
						id = u.ID
					}
				}
				require.NotZero(t, id)
				require.Equal(t, http.StatusOK, e.call("PUT", "/api/v1/users/"+itoa(id), other, map[string]string{"password": "a-new-password-9"}, nil))
			}
			require.NoFileExists(t, file)
		})
	}
}
