package server

import (
	"bufio"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseTrustedProxies(t *testing.T) {
	t.Parallel()
	got, err := ParseTrustedProxies(" 10.0.0.0/8, 192.0.2.7,fd00::/8 ,::ffff:198.51.100.1, 203.0.113.9/24,")
	require.NoError(t, err)
	require.Equal(t, []netip.Prefix{
		netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("192.0.2.7/32"), netip.MustParsePrefix("fd00::/8"),
		netip.MustParsePrefix("198.51.100.1/32"), netip.MustParsePrefix("203.0.113.0/24"),
	}, got)
	got, err = ParseTrustedProxies("")
	require.NoError(t, err)
	require.Empty(t, got)
	for _, bad := range []string{"lb.example.com", "10.0.0.0/33", "10.0.0.1:80", "fe80::1%eth0"} {
		_, err := ParseTrustedProxies(bad)
		require.ErrorContains(t, err, "is not", bad)
	}
	require.ErrorContains(t, HTTPConfig{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("::/0")}}.WithDefaults().validate(), "list the addresses of your load balancers")
}

func TestHTTPConfigDefaultsAndLimits(t *testing.T) {
	t.Parallel()
	c := HTTPConfig{}.WithDefaults()
	require.NoError(t, c.validate())
	require.Equal(t, HTTPConfig{ReadTimeout: DefaultReadTimeout, WriteTimeout: DefaultWriteTimeout, IdleTimeout: DefaultIdleTimeout, MaxConnsPerIP: DefaultMaxConnsPerIP,
		ManualRunsPerMinute: DefaultManualRunsPerMinute}, c)
	for _, tc := range []struct {
		c    HTTPConfig
		want string
	}{
		{HTTPConfig{ReadTimeout: -1}, "setting read-timeout: -1ns: use at least 1s"},
		{HTTPConfig{IdleTimeout: 500e6}, "setting idle-timeout: 500ms: use at least 1s"},
		{HTTPConfig{ReadTimeout: 90e9}, "setting write-timeout: 1m0s: must be longer than the read timeout 1m30s"},
		{HTTPConfig{MaxConnsPerIP: -1}, "setting max-conns-per-ip: -1: use at least 1"},
		{HTTPConfig{ManualRunsPerMinute: -1}, "setting manual-runs-per-minute: -1: use at least 1"},
	} {
		err := tc.c.WithDefaults().validate()
		require.ErrorContains(t, err, tc.want)
		var se *SettingError
		require.ErrorAs(t, err, &se, "the command names the setting in its own terms")
	}
}

// TestConnLimiter: connections beyond the cap from one address get a 429
// and are closed; closing one gives its place back; exempt addresses are
// not counted.
func TestConnLimiter(t *testing.T) {
	t.Parallel()
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ln := newConnLimiter(inner, 2, []netip.Prefix{netip.MustParsePrefix("127.0.0.3/32")}, slog.New(slog.DiscardHandler))
	t.Cleanup(func() { _ = ln.Close() })
	accepted := make(chan net.Conn, 16)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				close(accepted)
				return
			}
			accepted <- c
		}
	}()
	dial := func(local string) net.Conn {
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}}
		c, err := d.Dial("tcp", inner.Addr().String())
		require.NoError(t, err)
		t.Cleanup(func() { _ = c.Close() })
		return c
	}
	dial("127.0.0.1")
	dial("127.0.0.1")
	s1, s2 := <-accepted, <-accepted
	require.NotNil(t, s1)
	require.NotNil(t, s2)

	refused := dial("127.0.0.1")
	res, err := http.ReadResponse(bufio.NewReader(refused), nil)
	require.NoError(t, err)
	defer res.Body.Close()
	require.Equal(t, http.StatusTooManyRequests, res.StatusCode)
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	require.Contains(t, string(body), "too many open connections from 127.0.0.1 (at most 2, --max-conns-per-ip)")

	for range 3 { // exempt, and other addresses, are accepted
		dial("127.0.0.3")
		require.NotNil(t, <-accepted)
	}
	dial("127.0.0.2")
	require.NotNil(t, <-accepted)

	require.NoError(t, s1.Close())
	_ = s1.Close() // a second Close gives nothing back twice
	dial("127.0.0.1")
	require.NotNil(t, <-accepted, "the closed connection's place is free")
	ln.mu.Lock()
	defer ln.mu.Unlock()
	require.Equal(t, map[netip.Addr]int{netip.MustParseAddr("127.0.0.1"): 2, netip.MustParseAddr("127.0.0.2"): 1}, ln.open)
}
