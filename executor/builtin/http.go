package builtin

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/shardjob/shardjob/sdk"
	"github.com/shardjob/shardjob/sdk/egress"
)

// HTTPConfig configures the http handler. Every field has a safe default.
type HTTPConfig struct {
	// Allow lists the destinations requests may go to (flag --http-allow):
	//
	//   - "api.example.com": that host name, when every address it
	//     resolves to is public;
	//   - "*.example.com": any subdomain of example.com (not example.com
	//     itself), likewise public addresses only;
	//   - "203.0.113.7", "10.20.0.0/16", "::1": these addresses, whatever
	//     name leads to them — the only way to reach a loopback, private,
	//     link-local, unique-local, CGNAT or other special address;
	//   - "*": any host whose addresses are all public.
	//
	// Default: empty, every request is refused.
	Allow []string

	// MaxBodyBytes is how much of a response body is read; the rest is
	// not read (the response still counts). Default 1 MiB.
	MaxBodyBytes int64

	// LogBodyBytes is how much of the response body goes to the run log.
	// Default 512; negative: none.
	LogBodyBytes int

	// DefaultTimeout bounds a request whose params give no timeout_ms
	// (default 30s); MaxTimeout is the largest timeout_ms accepted at run
	// time (default 10 minutes, the largest ValidateParams accepts).
	DefaultTimeout time.Duration
	MaxTimeout     time.Duration

	// Resolve looks up the addresses of a host name. Default:
	// net.DefaultResolver.LookupNetIP(ctx, "ip", host). Tests replace it to
	// make a name resolve to a private address without DNS.
	Resolve func(ctx context.Context, host string) ([]netip.Addr, error)

	// TLSConfig is used for https (nil: the system's roots).
	TLSConfig *tls.Config
}

// errRedirect is wrapped by a redirect the handler does not follow.
var errRedirect = errors.New("redirect not followed")

// Limits of the http handler's params.
const (
	httpMaxTimeout      = 10 * time.Minute
	httpMaxRedirectsCap = 10
	httpDefaultRedirect = 5
)

// withDefaults fills in the defaults.
func (c HTTPConfig) withDefaults() HTTPConfig {
	if c.MaxBodyBytes <= 0 {
		c.MaxBodyBytes = 1 << 20
	}
	if c.LogBodyBytes == 0 {
		c.LogBodyBytes = 512
	}
	if c.DefaultTimeout <= 0 {
		c.DefaultTimeout = 30 * time.Second
	}
	if c.MaxTimeout <= 0 {
		c.MaxTimeout = httpMaxTimeout
	}
	if c.Resolve == nil {
		c.Resolve = func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		}
	}
	return c
}

// HTTP is the http handler: one request per slot, see docs/builtin-handlers.md.
type HTTP struct {
	cfg    HTTPConfig
	allow  *egress.List
	client *http.Client
}

// NewHTTP checks cfg and builds the handler.
func NewHTTP(cfg HTTPConfig) (*HTTP, error) {
	cfg = cfg.withDefaults()
	allow, err := egress.Parse(cfg.Allow, egress.Options{Resolve: cfg.Resolve, Wording: allowListErr})
	if err != nil {
		return nil, err
	}
	h := &HTTP{cfg: cfg, allow: allow}
	tr := &http.Transport{
		Proxy:                 nil, // a proxy would make the dial check look at the proxy, not the destination
		DialContext:           allow.DialContext,
		TLSClientConfig:       cfg.TLSConfig,
		ForceAttemptHTTP2:     true,
		DisableKeepAlives:     true, // no idle connections (or goroutines) outlive a slot
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: 0, // the request's context bounds it
	}
	h.client = &http.Client{Transport: tr}
	return h, nil
}

// httpParams is the JSON params of the http handler.
type httpParams struct {
	URL          string            `json:"url"`
	Method       string            `json:"method"`
	Headers      map[string]string `json:"headers"`
	Body         string            `json:"body"`
	TimeoutMS    int64             `json:"timeout_ms"`
	MaxRedirects *int              `json:"max_redirects"`
	Outcomes     map[string]string `json:"outcomes"`

	timeout   time.Duration
	redirects int
}

// Outcomes of an HTTP status.
const (
	outcomeSuccess = "success"
	outcomeRetry   = "retry"
	outcomeFail    = "fail"
)

var httpMethods = map[string]bool{"GET": true, "HEAD": true, "POST": true, "PUT": true, "PATCH": true, "DELETE": true, "OPTIONS": true}

// headers the params may not set: the URL and the transport own them.
var reservedHeaders = map[string]bool{"Host": true, "Content-Length": true, "Transfer-Encoding": true, "Connection": true, "Upgrade": true, "Te": true, "Trailer": true, "Proxy-Connection": true}

func parseHTTPParams(params string) (*httpParams, error) {
	var p httpParams
	if err := decodeParams(NameHTTP, params, &p); err != nil {
		return nil, err
	}
	if strings.TrimSpace(p.URL) == "" {
		return nil, paramsErr(NameHTTP, "url", "http.url_required")
	}
	probe, _ := expandSlot(p.URL, &sdk.Task{SlotCount: 1})
	if _, err := checkURL(probe); err != nil {
		return nil, paramsErrFrom(NameHTTP, "url", err)
	}
	p.Method = strings.ToUpper(strings.TrimSpace(p.Method))
	if p.Method == "" {
		p.Method = http.MethodGet
	}
	if !httpMethods[p.Method] {
		return nil, paramsErr(NameHTTP, "method", "http.method", "value", strconv.Quote(p.Method))
	}
	for _, k := range sortedKeys(p.Headers) {
		if !validHeaderName(k) {
			return nil, paramsErr(NameHTTP, "headers", "http.header_name", "header", strconv.Quote(k))
		}
		if reservedHeaders[http.CanonicalHeaderKey(k)] {
			return nil, paramsErr(NameHTTP, "headers", "http.header_set", "header", http.CanonicalHeaderKey(k))
		}
		if strings.ContainsAny(p.Headers[k], "\r\n\x00") {
			return nil, paramsErr(NameHTTP, "headers", "http.header_value", "header", k)
		}
	}
	var err error
	if p.timeout, err = timeoutParam(NameHTTP, p.TimeoutMS, 0, httpMaxTimeout); err != nil {
		return nil, err
	}
	p.redirects = httpDefaultRedirect
	if p.MaxRedirects != nil {
		if *p.MaxRedirects < 0 || *p.MaxRedirects > httpMaxRedirectsCap {
			return nil, paramsErr(NameHTTP, "max_redirects", "http.max_redirects", "value", *p.MaxRedirects, "max", httpMaxRedirectsCap)
		}
		p.redirects = *p.MaxRedirects
	}
	for _, k := range sortedKeys(p.Outcomes) {
		if !validStatusKey(k) {
			return nil, paramsErr(NameHTTP, "outcomes", "http.outcome_key", "key", strconv.Quote(k))
		}
		switch p.Outcomes[k] {
		case outcomeSuccess, outcomeRetry, outcomeFail:
		default:
			return nil, paramsErr(NameHTTP, "outcomes", "http.outcome_action", "key", k, "value", strconv.Quote(p.Outcomes[k]))
		}
	}
	return &p, nil
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func validHeaderName(k string) bool {
	if k == "" {
		return false
	}
	for _, r := range k {
		if r > 0x7e || r <= ' ' || strings.ContainsRune("\"(),/:;<=>?@[\\]{}", r) {
			return false
		}
	}
	return true
}

func validStatusKey(k string) bool {
	if len(k) == 3 && k[1:] == "xx" && k[0] >= '1' && k[0] <= '5' {
		return true
	}
	n, err := strconv.Atoi(k)
	return err == nil && n >= 100 && n <= 599 && len(k) == 3
}

// outcome maps a status to success, retry or fail: the params' code, then
// the params' class, then the defaults (2xx success; 408, 425, 429 and 5xx
// retry; anything else fail).
func (p *httpParams) outcome(status int) string {
	code := strconv.Itoa(status)
	if o, ok := p.Outcomes[code]; ok {
		return o
	}
	if o, ok := p.Outcomes[code[:1]+"xx"]; ok {
		return o
	}
	switch {
	case status >= 200 && status < 300:
		return outcomeSuccess
	case status == 408 || status == 425 || status == 429 || status >= 500:
		return outcomeRetry
	default:
		return outcomeFail
	}
}

// checkURL parses a request or redirect URL: http or https, a host, and a
// host that, when numeric, is a valid IPv4 address in some form.
func checkURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, newProblem("http.url_parse", errors.Unwrap(err), "url", strconv.Quote(raw), "error", errors.Unwrap(err))
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, newProblem("http.url_scheme", nil, "url", strconv.Quote(raw))
	}
	if u.Hostname() == "" {
		return nil, newProblem("http.url_host", nil, "url", strconv.Quote(raw))
	}
	if _, _, err := literalIP(u.Hostname()); err != nil {
		return nil, err
	}
	return u, nil
}

// Handle runs one request for the task.
func (h *HTTP) Handle(ctx context.Context, t *sdk.Task) error {
	p, err := parseHTTPParams(t.Params)
	if err != nil {
		return err
	}
	timeout := p.timeout
	if timeout == 0 {
		timeout = h.cfg.DefaultTimeout
	}
	if timeout > h.cfg.MaxTimeout {
		return paramsErr(NameHTTP, "timeout_ms", "params.timeout_executor", "value", p.TimeoutMS, "max", h.cfg.MaxTimeout)
	}
	rawURL, _ := expandSlot(p.URL, t)
	u, err := checkURL(rawURL)
	if err != nil {
		return err
	}
	body, _ := expandSlot(p.Body, t)
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, p.Method, u.String(), strings.NewReader(body))
	if err != nil {
		return fmt.Errorf("http: build request: %w", err)
	}
	if body == "" {
		req.Body, req.ContentLength = http.NoBody, 0
	}
	req.Header.Set("User-Agent", "shardjob-executor")
	req.Header.Set("X-Shardjob-Slot", strconv.Itoa(t.Slot))
	req.Header.Set("X-Shardjob-Total", strconv.Itoa(t.SlotCount))
	req.Header.Set("X-Shardjob-Run-Id", strconv.FormatInt(t.RunID, 10))
	req.Header.Set("X-Shardjob-Attempt", strconv.Itoa(t.Attempt))
	if w := workflowOf(t); w.RunID != 0 {
		req.Header.Set("X-Shardjob-Workflow-Run-Id", w.runID())
		req.Header.Set("X-Shardjob-Workflow-Node", w.Node)
		req.Header.Set("X-Shardjob-Business-Date", w.BusinessDate)
	}
	for k, v := range p.Headers {
		v, _ = expandSlot(v, t)
		req.Header.Set(k, v)
	}
	log := logger(t)
	client := *h.client
	client.CheckRedirect = func(next *http.Request, via []*http.Request) error {
		if len(via) > p.redirects {
			if p.redirects == 0 {
				return http.ErrUseLastResponse // the 3xx is the answer, mapped by outcomes
			}
			return fmt.Errorf("%w: more than %d redirects (max_redirects)", errRedirect, p.redirects)
		}
		if _, err := checkURL(next.URL.String()); err != nil {
			return fmt.Errorf("%w: %w", errRedirect, err)
		}
		// Refuse a literal address at once (a name is checked when dialled).
		if ip, ok, _ := literalIP(next.URL.Hostname()); ok {
			if err := h.allow.Permit("", ip); err != nil {
				return fmt.Errorf("%w to %s: %w", errRedirect, next.URL.Redacted(), err)
			}
		}
		log.Info("http redirect", "to", next.URL.Redacted(), "hop", len(via))
		return nil
	}
	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		switch {
		case errors.Is(err, ErrRefused), errors.Is(err, errRedirect):
			return fmt.Errorf("http %s %s: %w", p.Method, u.Redacted(), unwrapURLError(err))
		case ctx.Err() != nil:
			return fmt.Errorf("http %s %s: %w", p.Method, u.Redacted(), ctx.Err())
		case rctx.Err() != nil:
			return retryable("http %s %s: no answer within timeout %s", p.Method, u.Redacted(), timeout)
		default:
			return retryable("http %s %s: %v", p.Method, u.Redacted(), unwrapURLError(err))
		}
	}
	defer resp.Body.Close()
	buf, rerr := io.ReadAll(io.LimitReader(resp.Body, h.cfg.MaxBodyBytes+1))
	truncated := int64(len(buf)) > h.cfg.MaxBodyBytes
	if truncated {
		buf = buf[:h.cfg.MaxBodyBytes]
	}
	outcome := p.outcome(resp.StatusCode)
	attrs := []any{"method", p.Method, "url", resp.Request.URL.Redacted(), "status", resp.StatusCode, "outcome", outcome,
		"body_bytes", len(buf), "body_truncated", truncated, "duration", time.Since(start).Round(time.Millisecond).String()}
	if h.cfg.LogBodyBytes > 0 {
		attrs = append(attrs, "body", cappedPrefix(buf, h.cfg.LogBodyBytes))
	}
	log.Info("http response", attrs...)
	if rerr != nil && outcome == outcomeSuccess {
		if ctx.Err() != nil {
			return fmt.Errorf("http %s %s: reading the body: %w", p.Method, u.Redacted(), ctx.Err())
		}
		return retryable("http %s %s: %d, then reading the body failed: %v", p.Method, u.Redacted(), resp.StatusCode, rerr)
	}
	switch outcome {
	case outcomeSuccess:
		t.AddProcessed(1)
		t.Progress(1, 1)
		return nil
	case outcomeRetry:
		err := retryable("http %s %s: status %s", p.Method, u.Redacted(), resp.Status)
		if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable {
			if d, ok := parseRetryAfter(resp.Header.Get("Retry-After"), time.Now()); ok {
				return sdk.RetryAfter(err, d)
			}
		}
		return err
	default:
		// A 4xx (other than 408, 425, 429) or what outcomes maps to
		// "fail": the request is wrong, not the moment.
		return permanent("http %s %s: status %s", p.Method, u.Redacted(), resp.Status)
	}
}

// parseRetryAfter reads a Retry-After header (RFC 9110): delay seconds or
// an HTTP date, taken relative to now; capped at maxRetryAfter. false when
// the header is absent or unreadable, or the date has passed.
func parseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n <= 0 {
			return 0, false
		}
		if n > int64(maxRetryAfter/time.Second) {
			return maxRetryAfter, true
		}
		return time.Duration(n) * time.Second, true
	}
	at, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	d := at.Sub(now)
	if d <= 0 {
		return 0, false
	}
	return min(d, maxRetryAfter), true
}

func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// logger is the task's logger, or one that discards.
func logger(t *sdk.Task) *slog.Logger {
	if t.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return t.Logger
}

// literalIP is egress.LiteralIP with the handler's problems (Problems).
func literalIP(host string) (netip.Addr, bool, error) {
	ip, ok, err := egress.LiteralIP(host)
	return ip, ok, allowListErr(err)
}

// allowListErr words an error of the allow-list (sdk/egress: an entry of
// --http-allow, a refused destination, a host that is no valid address) as
// the handler's: refusals wrap ErrRefused, a host's problems are codes of
// Problems.
func allowListErr(err error) error {
	var he *egress.HostError
	var ee *egress.EntryError
	var r *egress.Refusal
	switch {
	case errors.As(err, &he):
		switch he.Problem {
		case egress.ZonedIP:
			return newProblem("http.host_zone", ErrRefused, "host", strconv.Quote(he.Host))
		case egress.BadIPv6:
			return newProblem("http.host_ipv6", nil, "host", strconv.Quote(he.Host))
		default:
			return newProblem("http.host_ipv4", nil, "host", strconv.Quote(he.Host))
		}
	case errors.As(err, &ee):
		raw := ee.Entry
		switch ee.Problem {
		case egress.BadWildcard:
			return fmt.Errorf("http allow-list entry %q: want *.domain, e.g. *.example.com", raw)
		case egress.BadCIDR:
			return fmt.Errorf("http allow-list entry %q: not a CIDR (e.g. 10.20.0.0/16, fd00::/8): %v", raw, ee.Err)
		case egress.ZonedIP:
			return fmt.Errorf("http allow-list entry %q: IPv6 zones are not supported", raw)
		case egress.NumericName:
			return fmt.Errorf("http allow-list entry %q: write IPv4 addresses as four decimal numbers (e.g. 127.0.0.1)", raw)
		default:
			return fmt.Errorf("http allow-list entry %q: want a host name, *.domain, an IP, a CIDR or * (no scheme, port or path)", raw)
		}
	case errors.As(err, &r):
		what := r.Dest()
		switch r.Reason {
		case egress.Unchecked:
			return refused("connection to %s was not checked against the allow-list", r.Address)
		case egress.Zoned:
			return refused("%s: addresses with an IPv6 zone are not allowed", what)
		case egress.NotPublic:
			return refused("%s is a %s address; only addresses on the executor's --http-allow list (IP or CIDR) may be reached there", what, r.Class)
		case egress.EmptyList:
			return refused("%s: the executor's http allow-list (--http-allow) is empty, so every destination is refused", what)
		default:
			return refused("%s is not on the executor's http allow-list (--http-allow %s)", what, r.List)
		}
	}
	return err
}
