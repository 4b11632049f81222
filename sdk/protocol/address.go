package protocol

import (
	"errors"
	"net/url"
)

// ErrAddress is the error of an executor address that is not an http(s)
// base URL.
var ErrAddress = errors.New("must be an http:// or https:// base URL such as http://10.0.0.5:9999/ (a host, no user, query or fragment)")

// ParseAddress checks an executor's address, the base URL the admin calls
// it at (a shardjob executor's heartbeat, an XXL-JOB executor's
// registration): http or https, a host, no user, query or fragment.
func ParseAddress(addr string) (*url.URL, error) {
	u, err := url.Parse(addr)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Hostname() == "" ||
		u.User != nil || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" || u.ForceQuery {
		return nil, ErrAddress
	}
	return u, nil
}
