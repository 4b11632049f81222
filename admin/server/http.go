package server

import (
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/shardjob/shardjob/admin/api"
)

// HTTPConfig bounds what clients may hold of the admin's HTTP server: whose
// forwarded addresses are believed, how long a request may take to arrive
// and to be answered, how long an idle connection stays open, and how many
// connections one client address may hold. Field comments name the flag;
// every field's zero value means its default.
type HTTPConfig struct {
	// TrustedProxies (--trusted-proxies): load balancers and reverse
	// proxies whose X-Forwarded-For header names the client. Default none:
	// the client address is the TCP peer's (api.Config.TrustedProxies).
	// Their connections are not capped by MaxConnsPerIP either: they carry
	// many clients.
	TrustedProxies []netip.Prefix
	// ReadTimeout (--read-timeout): the most a request may take to arrive,
	// headers and body (bodies are at most 1 MiB). Headers alone get at most
	// 10s. Default 30s.
	ReadTimeout time.Duration
	// WriteTimeout (--write-timeout): the most a request may take from the
	// end of its headers to the end of its answer: reading the body,
	// handling, writing. Longer than ReadTimeout, and than the slowest
	// handler: no route streams or long-polls, every answer is bounded, and
	// the admin's own clients give up sooner (executors after 10s,
	// shardjobctl after 30s). Default 60s.
	WriteTimeout time.Duration
	// IdleTimeout (--idle-timeout): how long a keep-alive connection may
	// wait for its next request. Longer than the 90s after which Go clients
	// (executors, shardjobctl) close idle connections themselves, so that
	// the admin never closes one just as a client sends on it. Default 2m.
	IdleTimeout time.Duration
	// MaxConnsPerIP (--max-conns-per-ip): open connections one client
	// address may hold; a connection beyond it is answered 429 and closed
	// at once. Default 256.
	MaxConnsPerIP int
	// ManualRunsPerMinute (--manual-runs-per-minute): the requests that
	// start or restart runs by hand (trigger, backfill, retry, rerun) one
	// user or API key may make in a minute; one more is answered 429 with
	// Retry-After (api.Config.ManualRunsPerMinute). Default 60.
	ManualRunsPerMinute int
}

// Defaults of HTTPConfig.
const (
	DefaultReadTimeout   = 30 * time.Second
	DefaultWriteTimeout  = 60 * time.Second
	DefaultIdleTimeout   = 2 * time.Minute
	DefaultMaxConnsPerIP = 256
	// DefaultManualRunsPerMinute is HTTPConfig.ManualRunsPerMinute's default.
	DefaultManualRunsPerMinute = api.DefaultManualRunsPerMinute
	maxReadHeaderTimeout       = 10 * time.Second
)

// WithDefaults fills zero fields.
func (c HTTPConfig) WithDefaults() HTTPConfig {
	if c.ReadTimeout == 0 {
		c.ReadTimeout = DefaultReadTimeout
	}
	if c.WriteTimeout == 0 {
		c.WriteTimeout = DefaultWriteTimeout
	}
	if c.IdleTimeout == 0 {
		c.IdleTimeout = DefaultIdleTimeout
	}
	if c.MaxConnsPerIP == 0 {
		c.MaxConnsPerIP = DefaultMaxConnsPerIP
	}
	if c.ManualRunsPerMinute == 0 {
		c.ManualRunsPerMinute = api.DefaultManualRunsPerMinute
	}
	return c
}

func (c HTTPConfig) validate() error {
	for _, d := range []struct {
		flag string
		v    time.Duration
		def  time.Duration
	}{{"read-timeout", c.ReadTimeout, DefaultReadTimeout}, {"write-timeout", c.WriteTimeout, DefaultWriteTimeout}, {"idle-timeout", c.IdleTimeout, DefaultIdleTimeout}} {
		if d.v < time.Second {
			return settingErr(d.flag, "%s: use at least 1s (default %s)", d.v, d.def)
		}
	}
	if c.WriteTimeout <= c.ReadTimeout {
		return settingErr("write-timeout", "%s: must be longer than the read timeout %s, which it includes (the body is read within it)", c.WriteTimeout, c.ReadTimeout)
	}
	if c.MaxConnsPerIP < 1 {
		return settingErr("max-conns-per-ip", "%d: use at least 1 (default %d)", c.MaxConnsPerIP, DefaultMaxConnsPerIP)
	}
	if c.ManualRunsPerMinute < 1 {
		return settingErr("manual-runs-per-minute", "%d: use at least 1 (default %d)", c.ManualRunsPerMinute, api.DefaultManualRunsPerMinute)
	}
	for _, p := range c.TrustedProxies {
		if p.Bits() == 0 {
			return settingErr("trusted-proxies", "%s: trusting every address lets any client choose its own address; list the addresses of your load balancers or proxies", p)
		}
	}
	return nil
}

// ParseTrustedProxies reads --trusted-proxies: IP addresses and CIDR
// ranges, IPv4 or IPv6, comma separated ("10.0.0.0/8, 192.0.2.7").
func ParseTrustedProxies(list string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, item := range strings.Split(list, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		if strings.Contains(item, "/") {
			p, err := netip.ParsePrefix(item)
			if err != nil {
				return nil, fmt.Errorf("%q is not a CIDR range (like 10.0.0.0/8 or fd00::/8)", item)
			}
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(item)
		if err != nil || a.Zone() != "" {
			return nil, fmt.Errorf("%q is not an IP address or CIDR range (like 192.0.2.7 or 10.0.0.0/8)", item)
		}
		a = a.Unmap()
		out = append(out, netip.PrefixFrom(a, a.BitLen()))
	}
	return out, nil
}

// httpServer returns the admin's http.Server for handler.
func (c HTTPConfig) httpServer(handler http.Handler, log *slog.Logger) *http.Server {
	return &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: min(maxReadHeaderTimeout, c.ReadTimeout),
		ReadTimeout:       c.ReadTimeout,
		WriteTimeout:      c.WriteTimeout,
		IdleTimeout:       c.IdleTimeout,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
}

// connLimiter is a net.Listener that caps the open connections per client
// address. A connection beyond the cap gets a 429 answer (written before
// its request is read) and is closed at once; the refusals of an address
// are logged once until it drops below the cap again. Addresses of trusted
// proxies are not counted.
type connLimiter struct {
	net.Listener
	max    int
	exempt []netip.Prefix
	log    *slog.Logger

	mu      sync.Mutex
	open    map[netip.Addr]int
	refused map[netip.Addr]bool // refusals logged since the address was last below the cap
}

func newConnLimiter(ln net.Listener, max int, exempt []netip.Prefix, log *slog.Logger) *connLimiter {
	return &connLimiter{Listener: ln, max: max, exempt: exempt, log: log, open: map[netip.Addr]int{}, refused: map[netip.Addr]bool{}}
}

// Accept returns the next connection within the cap.
func (l *connLimiter) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		addr, ok := remoteAddr(c)
		if !ok || l.isExempt(addr) {
			return c, nil
		}
		if l.acquire(addr) {
			return &limitedConn{Conn: c, release: func() { l.release(addr) }}, nil
		}
		l.refuse(c, addr)
	}
}

func remoteAddr(c net.Conn) (netip.Addr, bool) {
	ap, err := netip.ParseAddrPort(c.RemoteAddr().String())
	if err != nil {
		return netip.Addr{}, false
	}
	return ap.Addr().Unmap(), true
}

func (l *connLimiter) isExempt(a netip.Addr) bool {
	for _, p := range l.exempt {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

func (l *connLimiter) acquire(a netip.Addr) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open[a] >= l.max {
		return false
	}
	l.open[a]++
	return true
}

func (l *connLimiter) release(a netip.Addr) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open[a]--; l.open[a] <= 0 {
		delete(l.open, a)
	}
	delete(l.refused, a)
}

// refuse answers 429 and closes c. The write cannot block the accept loop
// for long: a new connection's send buffer is empty, and a deadline bounds it.
func (l *connLimiter) refuse(c net.Conn, a netip.Addr) {
	l.mu.Lock()
	first := !l.refused[a]
	l.refused[a] = true
	l.mu.Unlock()
	if first {
		l.log.Warn("refusing connections: client address holds the most open connections allowed", "client", a.String(), "max_conns_per_ip", l.max)
	}
	body := `{"error":"too many open connections from ` + a.String() + ` (at most ` + strconv.Itoa(l.max) +
		`, --max-conns-per-ip): close idle connections or reuse them, then try again"}`
	_ = c.SetWriteDeadline(time.Now().Add(time.Second))
	_, _ = c.Write([]byte("HTTP/1.1 429 Too Many Requests\r\nContent-Type: application/json\r\nConnection: close\r\nRetry-After: 1\r\n" +
		"Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body))
	_ = c.Close()
}

// limitedConn gives its slot back when closed, before the client can see
// the close.
type limitedConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitedConn) Close() error {
	c.once.Do(c.release)
	return c.Conn.Close()
}

var _ net.Listener = (*connLimiter)(nil)
