package egress_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/sdk/egress"
)

var vouched = egress.Options{Names: egress.VouchedNames}

// problemOf parses entries under o and returns the problem of the entry
// refused.
func problemOf(t *testing.T, o egress.Options, entry string) egress.Problem {
	t.Helper()
	_, err := egress.Parse([]string{entry}, o)
	var ee *egress.EntryError
	require.ErrorAs(t, err, &ee, entry)
	require.Equal(t, entry, ee.Entry)
	return ee.Problem
}

func TestParseUnderEachRule(t *testing.T) {
	t.Parallel()
	for entry, want := range map[string]egress.Problem{
		"http://api.example.com": egress.NotAHost, "a b": egress.NotAHost, "exec:9999": egress.NotAHost,
		"*.a..b": egress.BadWildcard, "*.-a": egress.BadWildcard, "10.0.0.0/33": egress.BadCIDR,
		"fe80::1%eth0": egress.ZonedIP, "127.1": egress.NumericName, "0x7f000001": egress.NumericName,
	} {
		require.Equal(t, want, problemOf(t, egress.Options{}, entry), entry)
	}
	for entry, want := range map[string]egress.Problem{
		"http://10.0.0.5": egress.NotAHost, "exec:9999": egress.NotAHost, "a b": egress.NotAHost, "*": egress.NotAHost,
		"*.example.com": egress.NotAHost, "1.2.3": egress.NotAHost, "10.0.0.0/33": egress.BadCIDR,
		"::ffff:10.0.0.0/104": egress.MappedCIDR,
	} {
		require.Equal(t, want, problemOf(t, vouched, entry), entry)
	}

	l, err := egress.Parse([]string{" ", "10.20.0.0/16", "Exec-1.Example.COM.", "[::1]"}, vouched)
	require.NoError(t, err)
	require.Equal(t, "10.20.0.0/16,exec-1.example.com,[::1]", l.String(), "normalized, blanks skipped")
	l, err = egress.Parse([]string{""}, egress.Options{Names: egress.VouchedNames, Default: []string{"10.0.0.0/8", "fc00::/7"}})
	require.NoError(t, err)
	require.Equal(t, "10.0.0.0/8,fc00::/7", l.String(), "none given: the default")
	l, err = egress.Parse(nil, egress.Options{})
	require.NoError(t, err)
	require.Empty(t, l.String(), "no default: empty")
	require.ErrorIs(t, l.Permit("example.com", netip.MustParseAddr("8.8.8.8")), egress.ErrNotAllowed, "an empty list refuses everything")

	_, err = egress.Parse([]string{"10.0.0.0/33"}, egress.Options{Wording: func(err error) error { return errors.New("worded: " + err.Error()) }})
	require.ErrorContains(t, err, "worded: allow-list entry \"10.0.0.0/33\": not a CIDR")
}

func TestVouchedNames(t *testing.T) {
	t.Parallel()
	l, err := egress.Parse([]string{"10.0.0.0/8", "exec.example.com"}, vouched)
	require.NoError(t, err)
	require.NoError(t, l.Permit("exec.example.com", netip.MustParseAddr("8.8.8.8")), "a listed name reaches whatever it resolves to")
	require.NoError(t, l.Permit("other.example.com", netip.MustParseAddr("10.1.2.3")), "any name reaches a listed range")
	require.ErrorIs(t, l.Permit("other.example.com", netip.MustParseAddr("127.0.0.1")), egress.ErrNotAllowed)

	require.NoError(t, l.CheckHost("Exec.Example.com."))
	require.NoError(t, l.CheckHost("10.9.9.9"))
	require.NoError(t, l.CheckHost("unlisted.example.com"), "a name is checked when dialled")
	var r *egress.Refusal
	require.ErrorAs(t, l.CheckHost("8.8.8.8"), &r)
	require.Equal(t, egress.NotListed, r.Reason)
	require.EqualError(t, r, "destination not on the allow-list: 8.8.8.8 is outside 10.0.0.0/8,exec.example.com")
	require.ErrorAs(t, l.CheckHost("127.1"), &r)
	require.Equal(t, egress.NotAName, r.Reason)
	require.ErrorAs(t, l.CheckHost("fe80::1%eth0"), &r)
	require.Equal(t, egress.NotListed, r.Reason, "an address with a zone is never in a range")
}

func TestPublicNamesCheckHost(t *testing.T) {
	t.Parallel()
	l, err := egress.Parse([]string{"*"}, egress.Options{})
	require.NoError(t, err)
	require.NoError(t, l.CheckHost("8.8.8.8"))
	require.NoError(t, l.CheckHost("localhost"), "a name is checked when dialled")
	var r *egress.Refusal
	require.ErrorAs(t, l.CheckHost("0x7f000001"), &r, "every spelling of loopback")
	require.Equal(t, egress.NotPublic, r.Reason)
	require.Equal(t, "loopback", r.Class)
	var he *egress.HostError
	require.ErrorAs(t, l.CheckHost("1.2.3.256"), &he)
	require.Equal(t, egress.NumericName, he.Problem)
}

// TestDialContext: each rule's dialer connects to a loopback server only
// when the list lets it, by the address connected to.
func TestDialContext(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	t.Cleanup(srv.Close)
	_, port, err := net.SplitHostPort(srv.Listener.Addr().String())
	require.NoError(t, err)
	resolve := func(_ context.Context, host string) ([]netip.Addr, error) {
		if host == "svc.test" {
			return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
		}
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	for _, c := range []struct {
		name    string
		entries []string
		o       egress.Options
		host    string
		reason  egress.Reason // -1: connects
	}{
		{"public: a name never reaches loopback", []string{"svc.test"}, egress.Options{Resolve: resolve}, "svc.test", egress.NotPublic},
		{"public: the CIDR does", []string{"127.0.0.0/8"}, egress.Options{Resolve: resolve}, "svc.test", -1},
		{"public: a legacy spelling is the address", []string{"*"}, egress.Options{Resolve: resolve}, "0x7f000001", egress.NotPublic},
		{"vouched: outside the ranges", []string{"10.0.0.0/8"}, vouched, "localhost", egress.NotListed},
		{"vouched: a listed name", []string{"10.0.0.0/8", "localhost"}, vouched, "localhost", -1},
		{"vouched: a listed range", []string{"127.0.0.0/8"}, vouched, "127.0.0.1", -1},
	} {
		l, err := egress.Parse(c.entries, c.o)
		require.NoError(t, err, c.name)
		conn, err := l.DialContext(context.Background(), "tcp", net.JoinHostPort(c.host, port))
		if c.reason == -1 {
			require.NoError(t, err, c.name)
			require.NoError(t, conn.Close())
			continue
		}
		var r *egress.Refusal
		require.ErrorAs(t, err, &r, c.name)
		require.Equal(t, c.reason, r.Reason, c.name)
	}
}
