package egress_test

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardjob/shardjob/sdk/egress"
)

func TestLiteralIP(t *testing.T) {
	t.Parallel()
	for host, want := range map[string]string{
		"127.0.0.1": "127.0.0.1", "127.1": "127.0.0.1", "127.0.1": "127.0.0.1", "0x7f000001": "127.0.0.1",
		"0x7F.0x0.0x0.0x1": "127.0.0.1", "2130706433": "127.0.0.1", "017700000001": "127.0.0.1", "0177.0.0.01": "127.0.0.1",
		"0": "0.0.0.0", "0.0.0.0": "0.0.0.0", "10.1": "10.0.0.1", "192.168.257": "192.168.1.1", "4294967295": "255.255.255.255",
		"::ffff:127.0.0.1": "127.0.0.1", "::1": "::1", "127.0.0.1.": "127.0.0.1", "0x": "0.0.0.0",
	} {
		ip, ok, err := egress.LiteralIP(host)
		require.NoError(t, err, host)
		require.True(t, ok, host)
		require.Equal(t, want, ip.String(), host)
	}
	for _, host := range []string{"example.com", "1.example.com", "a0x1", "0x1g", "localhost"} {
		_, ok, err := egress.LiteralIP(host)
		require.NoError(t, err, host)
		require.False(t, ok, host)
	}
	for _, host := range []string{"256.0.0.1", "4294967296", "1.2.3.4.5", "08.0.0.1", "1..1", "example.1", "1.2.3.0x100", "fe80::1%eth0"} {
		_, _, err := egress.LiteralIP(host)
		require.Error(t, err, host)
	}
}

func TestSpecialClass(t *testing.T) {
	t.Parallel()
	for ip, want := range map[string]string{
		"8.8.8.8": "", "2606:4700::1111": "", "93.184.215.14": "",
		"127.0.0.1": "loopback", "::1": "loopback", "10.0.0.1": "private", "172.16.0.1": "private", "192.168.1.1": "private",
		"169.254.169.254": "link-local", "fe80::1": "link-local", "fd00::1": "unique-local (fc00::/7)", "100.64.0.1": "CGNAT (100.64.0.0/10)",
		"224.0.0.1": "multicast", "ff02::1": "multicast", "0.0.0.0": "unspecified", "::": "unspecified", "255.255.255.255": "reserved (240.0.0.0/4)",
		"0.1.2.3": "\"this network\" (0.0.0.0/8)", "2002:7f00:1::": "6to4 (2002::/16)", "64:ff9b::7f00:1": "NAT64 (64:ff9b::/96)", "::7f00:1": "IPv4-compatible IPv6 (::/96)",
	} {
		require.Equal(t, want, egress.SpecialClass(netip.MustParseAddr(ip).Unmap()), ip)
	}
	a, err := egress.Parse([]string{"10.0.0.0/8", "::ffff:192.168.0.0/112", "api.example.com", "*.corp.example"}, egress.Options{})
	require.NoError(t, err)
	require.NoError(t, a.Permit("", netip.MustParseAddr("10.9.9.9")), "allow-listed CIDR reaches a private address")
	require.NoError(t, a.Permit("anything.test", netip.MustParseAddr("192.168.3.4")), "mapped CIDR is unmapped")
	require.NoError(t, a.Permit("api.example.com", netip.MustParseAddr("8.8.8.8")))
	require.NoError(t, a.Permit("x.corp.example", netip.MustParseAddr("8.8.8.8")))
	require.ErrorIs(t, a.Permit("corp.example", netip.MustParseAddr("8.8.8.8")), egress.ErrNotAllowed, "*.d is subdomains only")
	require.ErrorIs(t, a.Permit("api.example.com", netip.MustParseAddr("127.0.0.1")), egress.ErrNotAllowed, "a host name does not unlock loopback")
	require.ErrorIs(t, a.Permit("", netip.MustParseAddr("8.8.8.8")), egress.ErrNotAllowed, "a public IP literal needs * or its CIDR")
}

// FuzzHost: numeric host parsing never panics, agrees with netip on strict
// forms, and whatever it reads as an address is valid.
func FuzzHost(f *testing.F) {
	for _, s := range []string{"127.1", "0x7f000001", "2130706433", "0177.0.0.1", "::ffff:127.0.0.1", "a.b", "1.2.3.4.", "0x", "09"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, host string) {
		ip, ok, err := egress.LiteralIP(host)
		if err != nil {
			return
		}
		if ok && !ip.IsValid() {
			t.Fatalf("%q: invalid address", host)
		}
		if strict, perr := netip.ParseAddr(host); perr == nil && strict.Zone() == "" && (!ok || ip != strict.Unmap()) {
			t.Fatalf("%q: read as %v (%v), netip says %v", host, ip, ok, strict)
		}
		_, _ = egress.Parse([]string{host}, egress.Options{})
		_, _ = egress.Parse([]string{host}, egress.Options{Names: egress.VouchedNames})
	})
}
