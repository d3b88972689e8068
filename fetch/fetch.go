// Package fetch downloads the data of datasets registered from a URL, on
// behalf of users, safely: only http and https, bounded time (to connect
// and in all), at most a few redirects, at most a given number of bytes,
// and never a connection to a loopback, private, link-local, multicast or
// otherwise reserved address (cloud metadata services among them) unless
// the server is configured to allow it. The address check happens when
// connecting, on the address actually dialled, so that neither a redirect
// nor a DNS answer that changes between check and use can get around it.
package fetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"strings"
	"syscall"
	"time"

	"mapcommons"
)

// Options configure a Client. Zero values take the defaults.
type Options struct {
	AllowPrivate   bool          // allow loopback, private and reserved addresses (tests, closed networks)
	MaxBytes       int64         // the most a response body may hold; default 512 MiB
	ConnectTimeout time.Duration // to connect (and TLS handshake); default 10 s
	Timeout        time.Duration // for the whole fetch; default 5 min
	MaxRedirects   int           // default 5
	UserAgent      string        // default "mapcommons"
}

// Client fetches URLs.
type Client struct {
	opt Options
	hc  *http.Client
}

// New returns a Client.
func New(opt Options) *Client {
	if opt.MaxBytes <= 0 {
		opt.MaxBytes = 512 << 20
	}
	if opt.ConnectTimeout <= 0 {
		opt.ConnectTimeout = 10 * time.Second
	}
	if opt.Timeout <= 0 {
		opt.Timeout = 5 * time.Minute
	}
	if opt.MaxRedirects <= 0 {
		opt.MaxRedirects = 5
	}
	if opt.UserAgent == "" {
		opt.UserAgent = "mapcommons"
	}
	d := &net.Dialer{Timeout: opt.ConnectTimeout}
	if !opt.AllowPrivate {
		d.Control = refusePrivate
	}
	tr := &http.Transport{
		Proxy:                 nil, // a proxy would dial for us, past the address check
		DialContext:           d.DialContext,
		TLSHandshakeTimeout:   opt.ConnectTimeout,
		ResponseHeaderTimeout: opt.Timeout,
		MaxIdleConns:          4,
		IdleConnTimeout:       30 * time.Second,
	}
	c := &Client{opt: opt}
	c.hc = &http.Client{
		Transport: tr,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) > opt.MaxRedirects {
				return mapcommons.Errorf(mapcommons.EUPSTREAM, "url: more than %d redirects", opt.MaxRedirects)
			}
			if _, err := Check(req.URL.String()); err != nil {
				return mapcommons.Errorf(mapcommons.EUPSTREAM, "url: redirected to %s, which cannot be fetched", req.URL.Redacted())
			}
			return nil
		},
	}
	return c
}

// Check parses a URL given by a user and checks that it is one we may
// fetch: absolute, http or https, with a host. EINVALID otherwise. The URL
// it returns is in its normal form (mapcommons.NormalURL): the same for every
// spelling of the same address.
func Check(raw string) (*url.URL, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return nil, mapcommons.Errorf(mapcommons.EINVALID, "url: empty")
	}
	if len(raw) > 4096 {
		return nil, mapcommons.Errorf(mapcommons.EINVALID, "url: longer than 4096 bytes")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, mapcommons.Errorf(mapcommons.EINVALID, "url: not a URL: %v", errors.Unwrap(err))
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, mapcommons.Errorf(mapcommons.EINVALID, "url: only http and https URLs can be fetched, not %q", u.Scheme)
	}
	if u.Hostname() == "" {
		return nil, mapcommons.Errorf(mapcommons.EINVALID, "url: no host")
	}
	return mapcommons.NormalURL(u), nil
}

// Result is a fetched body, saved in a file the caller removes.
type Result struct {
	Path        string // the file holding the body
	Size        int64
	ContentType string // as the remote said, "" when it did not
	URL         string // the URL finally fetched, after redirects
}

// errPrivate is what the dialer's check returns for a refused address.
type errPrivate struct{ addr netip.Addr }

func (e *errPrivate) Error() string { return "refused address " + e.addr.String() }

// refusePrivate is the dialer's Control: it runs on the address about to
// be connected to.
func refusePrivate(network, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return err
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return err
	}
	if Private(a) {
		return &errPrivate{a}
	}
	return nil
}

// Addresses a user may make us fetch from, following IANA's IPv4 and IPv6
// Special-Purpose Address Registries: only globally reachable unicast.
// IPv6 is an allow list, the global unicast block 2000::/3, so that every
// range IANA reserves outside it (the IPv4-compatible ::/96, the discard
// prefix 100::/64, SRv6 SIDs 5f00::/16, unique local, link-local, site-local,
// multicast, NAT64 64:ff9b::/96 and 64:ff9b:1::/48 …) is refused without
// being listed. Inside 2000::/3 and in IPv4, reserved lists the special
// ranges besides the loopback, private, link-local, multicast and
// unspecified ones that netip knows: "this network", carrier-grade NAT
// (where some clouds keep their metadata service), IETF protocol
// assignments (192.0.0.0/24, 2001::/23 with Teredo), documentation,
// benchmarking, the deprecated 6to4 relay anycast, the old class E and the
// broadcast address, 6to4 (2002::/16, which embeds IPv4 addresses) and the
// IPv6 documentation ranges.
var globalUnicast6 = netip.MustParsePrefix("2000::/3")

var reserved = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("192.0.2.0/24"),
	netip.MustParsePrefix("192.88.99.0/24"),
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("198.51.100.0/24"),
	netip.MustParsePrefix("203.0.113.0/24"),
	netip.MustParsePrefix("240.0.0.0/4"),
	netip.MustParsePrefix("2001::/23"),
	netip.MustParsePrefix("2001:db8::/32"),
	netip.MustParsePrefix("2002::/16"),
	netip.MustParsePrefix("3fff::/20"),
}

// Private reports whether a is an address a user may not make us fetch
// from without AllowPrivate.
func Private(a netip.Addr) bool {
	a = a.Unmap()
	if a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() ||
		a.IsInterfaceLocalMulticast() || a.IsMulticast() || a.IsUnspecified() || !a.IsValid() {
		return true
	}
	if a.Is6() && !globalUnicast6.Contains(a) {
		return true
	}
	for _, p := range reserved {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// Get fetches raw into a new file in dir. Errors: EINVALID for a URL that
// may not be fetched, ETOOLARGE for a body over the limit, EUPSTREAM for
// everything that went wrong with the remote (unreachable, an HTTP error,
// too slow, too many redirects), each with a message saying what.
func (c *Client) Get(ctx context.Context, raw, dir string) (*Result, error) {
	u, err := Check(raw)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, c.opt.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, mapcommons.Errorf(mapcommons.EINVALID, "url: %v", err)
	}
	req.Header.Set("User-Agent", c.opt.UserAgent)
	req.Header.Set("Accept", "*/*")
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, c.explain(ctx, u, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, mapcommons.Errorf(mapcommons.EUPSTREAM, "url: %s answered %s", u.Host, resp.Status)
	}
	if resp.ContentLength > c.opt.MaxBytes {
		return nil, mapcommons.Errorf(mapcommons.ETOOLARGE, "url: the remote file is %d bytes, more than the limit of %d", resp.ContentLength, c.opt.MaxBytes)
	}
	f, err := os.CreateTemp(dir, "fetch-*")
	if err != nil {
		return nil, err
	}
	res := &Result{Path: f.Name(), ContentType: resp.Header.Get("Content-Type"), URL: resp.Request.URL.String()}
	fail := func(err error) (*Result, error) {
		f.Close()
		os.Remove(res.Path)
		return nil, err
	}
	// The limit counts the body as decoded: the transport asked for gzip
	// and decodes a gzip Content-Encoding itself (any other encoding is
	// kept as sent), so a small compressed body that expands past the
	// limit stops at it.
	n, err := io.Copy(f, io.LimitReader(resp.Body, c.opt.MaxBytes+1))
	if err != nil {
		return fail(c.explain(ctx, u, err))
	}
	if n > c.opt.MaxBytes {
		return fail(mapcommons.Errorf(mapcommons.ETOOLARGE, "url: the remote file is larger than the limit of %d bytes", c.opt.MaxBytes))
	}
	if err := f.Close(); err != nil {
		return fail(err)
	}
	res.Size = n
	return res, nil
}

// explain turns a transport error into a message about the remote.
func (c *Client) explain(ctx context.Context, u *url.URL, err error) error {
	var me *mapcommons.Error
	if errors.As(err, &me) {
		return me // from CheckRedirect
	}
	var pe *errPrivate
	if errors.As(err, &pe) {
		return mapcommons.Errorf(mapcommons.EINVALID, "url: %s is at %s, a private or reserved address, which this server does not fetch from", u.Hostname(), pe.addr)
	}
	var dnsErr *net.DNSError
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return mapcommons.Errorf(mapcommons.EUPSTREAM, "url: %s did not answer within %v", u.Host, c.opt.Timeout)
	case errors.As(err, &dnsErr):
		return mapcommons.Errorf(mapcommons.EUPSTREAM, "url: cannot find the host %s", u.Hostname())
	case errors.Is(err, syscall.ECONNREFUSED):
		return mapcommons.Errorf(mapcommons.EUPSTREAM, "url: %s refused the connection", u.Host)
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return mapcommons.Errorf(mapcommons.EUPSTREAM, "url: %s did not answer in time", u.Host)
	}
	return mapcommons.Errorf(mapcommons.EUPSTREAM, "url: fetching from %s failed: %s", u.Host, shortError(err))
}

// shortError is the innermost message of a chain of wrapped errors.
func shortError(err error) string {
	for {
		u := errors.Unwrap(err)
		if u == nil {
			return fmt.Sprint(err)
		}
		err = u
	}
}
