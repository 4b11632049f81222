package sdk

import (
	"log/slog"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func validConfig() Config {
	return Config{App: "billing", Admins: []string{"http://127.0.0.1:8080"}, Secret: testSecret}
}

func TestConfigWithDefaults(t *testing.T) {
	t.Parallel()
	c := validConfig()
	c.Admins = []string{" http://a:1/ ", "https://b"}
	d := c.WithDefaults()
	require.Equal(t, []string{"http://a:1", "https://b"}, d.Admins)
	require.Equal(t, []string{" http://a:1/ ", "https://b"}, c.Admins, "the caller's slice is not modified")
	require.Equal(t, "127.0.0.1:0", d.ListenAddr)
	require.Empty(t, d.AdvertiseURL, "known only once the listener is bound")
	require.Regexp(t, regexp.MustCompile(`^.+-\d+-[0-9a-f]{8}$`), d.InstanceID)
	require.Equal(t, 4, d.Capacity)
	require.Equal(t, 2*time.Second, d.HeartbeatInterval)
	require.Equal(t, 30*time.Second, d.DrainTimeout)
	require.Equal(t, 256, d.ResultBatch)
	require.Equal(t, 100000, d.MaxPendingResults)
	require.Nil(t, d.HTTPClient, "New builds its own client")
	require.Same(t, slog.Default(), d.Logger)
	require.NoError(t, d.Validate())

	c.Capacity, c.InstanceID = 9, "me"
	d = c.WithDefaults()
	require.Equal(t, 9, d.Capacity)
	require.Equal(t, "me", d.InstanceID)
	require.NotEqual(t, validConfig().WithDefaults().InstanceID, validConfig().WithDefaults().InstanceID)
}

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		mutate func(c *Config)
		want   string // the error names the field and the fix
	}{
		{"no app", func(c *Config) { c.App = " " }, "App is empty: set it to the app"},
		{"no admins", func(c *Config) { c.Admins = nil }, "Admins is empty: set at least one admin base URL"},
		{"admin without scheme", func(c *Config) { c.Admins = []string{"127.0.0.1:8080"} }, `Admins[0] "127.0.0.1:8080": must start with "http://" or "https://"`},
		{"admin with query", func(c *Config) { c.Admins = []string{"http://a:1", "http://b:2/?x=1"} }, `Admins[1] "http://b:2/?x=1": must not have a query`},
		{"no secret", func(c *Config) { c.Secret = "" }, "Secret: must be at least 16 characters (got 0)"},
		{"short secret", func(c *Config) { c.Secret = "short" }, "Secret: must be at least 16 characters (got 5)"},
		{"bad listen addr", func(c *Config) { c.ListenAddr = "9090" }, `ListenAddr "9090"`},
		{"all interfaces", func(c *Config) { c.ListenAddr = ":9090" }, `AdvertiseURL is empty but ListenAddr ":9090" listens on all interfaces`},
		{"all interfaces v4", func(c *Config) { c.ListenAddr = "0.0.0.0:9090" }, "set AdvertiseURL to the URL the admin can reach"},
		{"bad advertise", func(c *Config) { c.AdvertiseURL = "10.0.0.5:9090" }, `AdvertiseURL "10.0.0.5:9090"`},
		{"negative capacity", func(c *Config) { c.Capacity = -1 }, "Capacity is -1"},
		{"negative interval", func(c *Config) { c.HeartbeatInterval = -time.Second }, "HeartbeatInterval is -1s"},
		{"negative drain", func(c *Config) { c.DrainTimeout = -time.Second }, "DrainTimeout is -1s"},
		{"negative batch", func(c *Config) { c.ResultBatch = -1 }, "ResultBatch is -1"},
		{"negative pending", func(c *Config) { c.MaxPendingResults = -1 }, "MaxPendingResults is -1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := validConfig()
			tc.mutate(&c)
			err := c.Validate()
			require.ErrorIs(t, err, ErrInvalidConfig)
			require.ErrorContains(t, err, tc.want)
			_, err = New(c)
			require.ErrorContains(t, err, tc.want, "New validates too")
		})
	}

	t.Run("all problems at once", func(t *testing.T) {
		t.Parallel()
		err := Config{}.Validate()
		require.ErrorIs(t, err, ErrInvalidConfig)
		require.Len(t, strings.Split(err.Error(), "\n"), 3, "App, Admins, Secret: %v", err)
	})
	t.Run("all interfaces with AdvertiseURL", func(t *testing.T) {
		t.Parallel()
		c := validConfig()
		c.ListenAddr, c.AdvertiseURL = ":9090", "http://10.0.0.5:9090/"
		require.NoError(t, c.Validate())
		require.Equal(t, "http://10.0.0.5:9090", c.WithDefaults().AdvertiseURL)
	})
}
