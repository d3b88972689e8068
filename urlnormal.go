package mapcommons

// The one form of a URL: a dataset is registered from a URL once, so two
// spellings of the same address must compare equal (RFC 3986 section 6:
// case, percent-encoding and path segment normalisation, and the
// scheme-based normalisation of HTTP: the default port, an empty path, an
// empty query). The fragment is never sent to the server and is dropped;
// repeated slashes in the path are taken for one, as the servers we fetch
// from do.

import (
	"net"
	"net/url"
	"strings"
)

// NormalURL returns the normal form of an http or https URL: the scheme
// and host in lower case without the scheme's default port, the path without dot segments and repeated slashes ("/"
// when empty), percent-encodings of unreserved characters decoded and the
// others in upper case, no empty query and no fragment. The order of
// query parameters is kept (servers may read it).
func NormalURL(u *url.URL) *url.URL {
	scheme := strings.ToLower(u.Scheme)
	host := strings.ToLower(u.Host)
	if h, port, err := net.SplitHostPort(host); err == nil {
		if port == "" || (scheme == "http" && port == "80") || (scheme == "https" && port == "443") {
			host = h
			if strings.Contains(h, ":") {
				host = "[" + h + "]"
			}
		}
	} else {
		host = strings.TrimSuffix(host, ":") // "example.com:" has an empty port
	}
	var b strings.Builder
	b.WriteString(scheme + "://")
	if u.User != nil {
		b.WriteString(u.User.String() + "@")
	}
	b.WriteString(host)
	b.WriteString(normalPath(u.EscapedPath()))
	if q := normalEscapes(u.RawQuery); q != "" {
		b.WriteString("?" + q)
	}
	out, err := url.Parse(b.String())
	if err != nil { // cannot happen: every part came from a parsed URL
		return u
	}
	return out
}

// normalPath normalises an escaped path: escapes first (so that "%2E" is
// a dot), then dot segments and empty segments. A path that ends in a
// slash, or in a dot segment, keeps its final slash: it may name another
// resource than the same path without it.
func normalPath(p string) string {
	var out []string
	dir := false
	for _, s := range strings.Split(normalEscapes(p), "/") {
		dir = true
		switch s {
		case "", ".":
		case "..":
			if len(out) > 0 {
				out = out[:len(out)-1]
			}
		default:
			out, dir = append(out, s), false
		}
	}
	p = "/" + strings.Join(out, "/")
	if dir && len(out) > 0 {
		p += "/"
	}
	return p
}

// normalEscapes decodes the percent-encodings of unreserved characters
// (letters, digits, "-", ".", "_", "~") and writes the others' hex digits
// in upper case.
func normalEscapes(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '%' || i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
			b.WriteByte(s[i])
			continue
		}
		c := unhex(s[i+1])<<4 | unhex(s[i+2])
		if isUnreserved(c) {
			b.WriteByte(c)
		} else {
			b.WriteString("%" + strings.ToUpper(s[i+1:i+3]))
		}
		i += 2
	}
	return b.String()
}

func isUnreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~'
}

func isHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

func unhex(c byte) byte {
	switch {
	case '0' <= c && c <= '9':
		return c - '0'
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}
