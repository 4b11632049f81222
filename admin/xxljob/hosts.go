package xxljob

import (
	"errors"
	"fmt"

	"github.com/shardjob/shardjob/sdk/egress"
)

// DefaultAllowedHosts is the default of Config.AllowedHosts
// (--xxljob-allowed-hosts): loopback and the private networks (RFC 1918,
// IPv6 unique-local), where executors run. Public addresses, link-local
// ones (169.254.169.254, the cloud metadata service), CGNAT and the other
// special ranges are not on it.
var DefaultAllowedHosts = []string{"127.0.0.0/8", "::1/128", "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "fc00::/7"}

// ErrHostNotAllowed is wrapped by a refusal to register, or to call, an
// executor address whose host is not on the admin's allow-list.
var ErrHostNotAllowed = errors.New("host not on the admin's XXL-JOB allow-list (--xxljob-allowed-hosts)")

// AllowedHosts is where the admin may call XXL-JOB executors: a registry
// value is an address any holder of an app's token chooses, and the admin
// POSTs to it every probe with the app's token. Entries are CIDRs
// ("10.20.0.0/16"), IP addresses, and host names; a host name entry allows
// that name whatever it resolves to (the operator vouches for the name), any
// other name is allowed when the address it connects to is in a listed
// range. The check is made on the address each connection actually goes to
// (net.Dialer.Control), so DNS answers that change, and unusual spellings of
// an IP address, lead nowhere unchecked. It is an sdk/egress List under the
// rule egress.VouchedNames.
type AllowedHosts = egress.List

// ParseAllowedHosts parses the entries; none means DefaultAllowedHosts.
func ParseAllowedHosts(entries []string) (*AllowedHosts, error) {
	return egress.Parse(entries, egress.Options{Names: egress.VouchedNames, Default: DefaultAllowedHosts, Wording: allowedHostsErr})
}

// allowedHostsErr words an error of the allow-list (sdk/egress) as the
// admin's: an entry of --xxljob-allowed-hosts, or a refusal wrapping
// ErrHostNotAllowed.
func allowedHostsErr(err error) error {
	var ee *egress.EntryError
	var r *egress.Refusal
	switch {
	case errors.As(err, &ee):
		raw := ee.Entry
		switch ee.Problem {
		case egress.BadCIDR:
			return fmt.Errorf("xxljob allowed hosts: %q is not a CIDR (e.g. 10.20.0.0/16, fd00::/8): %v", raw, ee.Err)
		case egress.MappedCIDR:
			return fmt.Errorf("xxljob allowed hosts: %q: write IPv4 ranges in IPv4 (e.g. 10.20.0.0/16)", raw)
		default:
			return fmt.Errorf("xxljob allowed hosts: %q: want a CIDR (10.20.0.0/16), an IP address or a host name, without scheme, port or path", raw)
		}
	case errors.As(err, &r):
		if r.Reason == egress.NotAName {
			return fmt.Errorf("%w: %q is neither an IP address nor a host name", ErrHostNotAllowed, r.Host)
		}
		return fmt.Errorf("%w: %s is outside %s", ErrHostNotAllowed, r.Dest(), r.List)
	}
	return err
}
