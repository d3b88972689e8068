package api

import (
	"io"
	"net/netip"
	"strconv"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"
)

// The access line of a request, written straight to Config.AccessLog in
// the form slog's TextHandler gives it (the tests compare the two), where
// the logger took a twentieth of the CPU of a feature page: a Record, its
// attributes boxed, the handler's state, a pass over each string.

// accessBufs keep the lines' buffers between requests.
var accessBufs = sync.Pool{New: func() any { b := make([]byte, 0, 256); return &b }}

// writeAccessLine writes the line of a request to w, in one Write.
func writeAccessLine(w io.Writer, t time.Time, method, path string, status int, bytes int64, ms float64, user string, client netip.Addr) {
	bp := accessBufs.Get().(*[]byte)
	b := appendAccessLine((*bp)[:0], t, method, path, status, bytes, ms, user, client)
	w.Write(b)
	*bp = b
	accessBufs.Put(bp)
}

// appendAccessLine appends the line to b.
func appendAccessLine(b []byte, t time.Time, method, path string, status int, bytes int64, ms float64, user string, client netip.Addr) []byte {
	b = append(b, "time="...)
	b = appendMillis(b, t)
	b = append(b, " level=INFO msg=request method="...)
	b = appendLogString(b, method)
	b = append(b, " path="...)
	b = appendLogString(b, path)
	b = append(b, " status="...)
	b = strconv.AppendInt(b, int64(status), 10)
	b = append(b, " bytes="...)
	b = strconv.AppendInt(b, bytes, 10)
	b = append(b, " ms="...)
	b = strconv.AppendFloat(b, ms, 'g', -1, 64)
	b = append(b, " user="...)
	b = appendLogString(b, user)
	b = append(b, " client="...)
	n := len(b)
	if b = client.AppendTo(b); !client.IsValid() || needsLogQuotes(string(b[n:])) {
		b = appendLogString(b[:n], client.String())
	}
	return append(b, '\n')
}

// appendMillis appends t in RFC 3339 with exactly three digits of the
// second's fraction, as slog does.
func appendMillis(b []byte, t time.Time) []byte {
	const prefix = len("2006-01-02T15:04:05.000")
	n := len(b)
	t = t.Truncate(time.Millisecond).Add(time.Millisecond / 10) // four digits always
	b = t.AppendFormat(b, time.RFC3339Nano)
	return append(b[:n+prefix], b[n+prefix+1:]...)
}

// appendLogString appends s as slog's text form has it: bare, or quoted
// when it is empty or holds a space, '=', '"', a control character, or a
// rune that is not printable or not valid.
func appendLogString(b []byte, s string) []byte {
	if needsLogQuotes(s) {
		return strconv.AppendQuote(b, s)
	}
	return append(b, s...)
}

func needsLogQuotes(s string) bool {
	if s == "" {
		return true
	}
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c <= ' ' || c == '=' || c == '"' {
				return true
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError || unicode.IsSpace(r) || !unicode.IsPrint(r) {
			return true
		}
		i += size
	}
	return false
}
