package api

import (
	"bytes"
	"context"
	"log/slog"
	"math/rand/v2"
	"net/netip"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// slogLine is the access line as the logger wrote it before accesslog.go.
func slogLine(t time.Time, method, path string, status int, n int64, ms float64, user string, client netip.Addr) string {
	var buf bytes.Buffer
	r := slog.NewRecord(t, slog.LevelInfo, "request", 0)
	r.AddAttrs(slog.String("method", method), slog.String("path", path), slog.Int("status", status), slog.Int64("bytes", n),
		slog.Float64("ms", ms), slog.String("user", user), slog.String("client", client.String()))
	if err := slog.NewTextHandler(&buf, nil).Handle(context.Background(), r); err != nil {
		panic(err)
	}
	return buf.String()
}

// TestAccessLineAsSlog checks that the access line written straight is the
// one slog's TextHandler writes, byte for byte: for every byte and
// rune class in the path and the login (quoting), for times in other zones
// and on whole milliseconds, for addresses of both families and none.
func TestAccessLineAsSlog(t *testing.T) {
	zone := time.FixedZone("x", -(3*3600 + 30*60))
	times := []time.Time{
		time.Date(2026, 12, 3, 11, 6, 25, 123456789, time.UTC),
		time.Date(2026, 12, 3, 11, 6, 25, 0, zone),
		time.Date(1999, 1, 2, 3, 4, 5, 999999999, time.Local),
	}
	clients := []netip.Addr{{}, netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("2001:db8::1"),
		netip.MustParseAddr("fe80::1%eth0"), netip.MustParseAddr("::ffff:10.0.0.1")}
	strs := []string{"", "/datasets/1/features.json", "a b", "a=b", `a"b`, `a\b`, "é", "\u00a0", "\u2028", "\x7f", "\xff", "日本"}
	for c := range 256 {
		strs = append(strs, "/p"+string(rune(c)), "/q"+string([]byte{byte(c)}))
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		n := r.IntN(12)
		var sb strings.Builder
		for range n {
			switch r.IntN(3) {
			case 0:
				sb.WriteByte(byte(r.IntN(256)))
			case 1:
				sb.WriteRune(rune(r.IntN(0x3000)))
			default:
				sb.WriteByte(byte(' ' + r.IntN(95)))
			}
		}
		strs = append(strs, sb.String())
	}
	floats := []float64{0, 0.183, 12.5, 1e-3, 123456.789, 1e21}
	checked := 0
	for i, s := range strs {
		tm, c, ms := times[i%len(times)], clients[i%len(clients)], floats[i%len(floats)]
		user := strs[(i*7)%len(strs)]
		want := slogLine(tm, "GET", s, 200+i%300, int64(i*37), ms, user, c)
		got := string(appendAccessLine(nil, tm, "GET", s, 200+i%300, int64(i*37), ms, user, c))
		if got != want {
			t.Fatalf("path %q, user %q:\n got %s want %s", s, user, got, want)
		}
		if !utf8.ValidString(s) {
			checked++
		}
	}
	if checked == 0 {
		t.Fatal("no path with invalid UTF-8 was tried")
	}
	var w bytes.Buffer
	writeAccessLine(&w, times[0], "POST", "/x", 201, 5, 0.5, "alice", clients[1])
	if want := slogLine(times[0], "POST", "/x", 201, 5, 0.5, "alice", clients[1]); w.String() != want {
		t.Fatalf("written %q, want %q", w.String(), want)
	}
}
