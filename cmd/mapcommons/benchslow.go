package main

// The slow-client measurement: it starts this binary's server as a child
// process and holds many anonymous connections that send their bodies
// slowly, the way a slowloris attack does, while it samples the server's
// memory. It reports the peak RSS and how many connections the server
// still holds open.

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// slowScenario is one way of sending bodies slowly.
type slowScenario struct {
	name string
	// head is the request head of connection i; chunk, what it sends each
	// tick (chunked encoding when the head says so).
	head  func(i int) string
	chunk func(i int) []byte
	tick  time.Duration
}

func benchSlow(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bench-slow", flag.ContinueOnError)
	fs.SetOutput(stderr)
	conns := fs.Int("c", 1000, "connections")
	duration := fs.Duration("duration", 60*time.Second, "how long each scenario runs")
	only := fs.String("scenario", "", "run only this scenario")
	extra := fs.String("server-args", "", "more flags for the server, space separated")
	exe := fs.String("server", "", "the server binary to measure (default: this one)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	out := func(format string, a ...any) { fmt.Fprintf(stdout, format+"\n", a...) }
	work, err := os.MkdirTemp("", "mapcommons-slow-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	srvArgs := append([]string{"serve", "--addr", "127.0.0.1:0", "--data", work}, strings.Fields(*extra)...)
	if *exe == "" {
		if *exe, err = os.Executable(); err != nil {
			return err
		}
	}
	srv, err := startChildOf(*exe, srvArgs...)
	if err != nil {
		return err
	}
	defer srv.stop()
	addr := strings.TrimPrefix(srv.base, "http://")
	// A map for the routes that refuse anonymous callers.
	if err := rawPost(addr, "POST /maps.json HTTP/1.1\r\nHost: x\r\nAuthorization: Basic YWRtaW46YmVuY2gtc2VjcmV0\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 23\r\nConnection: close\r\n\r\ntitle=M&basemap=Acetate"); err != nil {
		return err
	}
	out("server %s, %d connections per scenario, %s each; RSS at rest %.1f MiB", srv.base, *conns, *duration, srv.mem("VmRSS"))

	const big = 15 << 20
	form := "Content-Type: application/x-www-form-urlencoded\r\n"
	oneByte, twoKiB, oneMiB := []byte("a"), []byte("800\r\n"+strings.Repeat("a", 2048)+"\r\n"), []byte(strings.Repeat("a", 1000<<10))
	fifteenMB := []byte("user[login]=" + strings.Repeat("a", big-12))
	scenarios := []slowScenario{
		{
			// One byte every 5 s of a declared 200 kB form (under max-form,
			// and small enough for the server to drain when it refuses),
			// on routes that read it (sign-up, search, features) and
			// routes that refuse anonymous callers (map update, layers).
			name: "trickle",
			head: func(i int) string {
				path := []string{"POST /users.json", "GET /search.json", "GET /datasets/1/features.json", "PUT /maps/1.json", "POST /maps/1/layers.json"}[i%5]
				return fmt.Sprintf("%s HTTP/1.1\r\nHost: x\r\n%sContent-Length: %d\r\n\r\n", path, form, 200000)
			},
			chunk: func(int) []byte { return oneByte },
			tick:  5 * time.Second,
		},
		{
			// The same with a declared 15 MB form: refused at once.
			name: "trickle-15MB",
			head: func(i int) string {
				path := []string{"POST /users.json", "GET /search.json", "GET /datasets/1/features.json", "PUT /maps/1.json", "POST /maps/1/layers.json"}[i%5]
				return fmt.Sprintf("%s HTTP/1.1\r\nHost: x\r\n%sContent-Length: %d\r\n\r\n", path, form, big)
			},
			chunk: func(int) []byte { return oneByte },
			tick:  5 * time.Second,
		},
		{
			// Chunked forms at 2 KiB a second each, above the minimum
			// rate: each would grow to max-form.
			name: "chunked-forms",
			head: func(i int) string {
				path := []string{"POST /users.json", "GET /search.json"}[i%2]
				return fmt.Sprintf("%s HTTP/1.1\r\nHost: x\r\n%sTransfer-Encoding: chunked\r\n\r\n", path, form)
			},
			chunk: func(int) []byte { return twoKiB },
			tick:  time.Second,
		},
		{
			// Forms just under max-form (1 MiB), sent as fast as they go.
			name: "fast-forms",
			head: func(i int) string {
				return fmt.Sprintf("POST /users.json HTTP/1.1\r\nHost: x\r\n%sContent-Length: %d\r\n\r\n", form, 1000<<10)
			},
			chunk: func(int) []byte { return oneMiB },
			tick:  time.Hour, // sent once
		},
		{
			// 15 MB forms sent as fast as they go (the 40
			// anonymous connections: run it with -c 40).
			name: "fast-15MB",
			head: func(i int) string {
				path := []string{"POST /users.json", "PUT /maps/1.json"}[i%2]
				return fmt.Sprintf("%s HTTP/1.1\r\nHost: x\r\n%sContent-Length: %d\r\n\r\n", path, form, big)
			},
			chunk: func(int) []byte { return fifteenMB },
			tick:  time.Hour,
		},
	}
	for _, sc := range scenarios {
		if *only != "" && sc.name != *only {
			continue
		}
		if err := runSlow(ctx, srv, addr, sc, *conns, *duration, out); err != nil {
			return err
		}
	}
	return nil
}

// rawPost sends a request and waits for its answer's first bytes.
func rawPost(addr, request string) error {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, request); err != nil {
		return err
	}
	b := make([]byte, 12)
	if _, err := io.ReadFull(conn, b); err != nil {
		return err
	}
	if !strings.HasPrefix(string(b), "HTTP/1.1 201") {
		return fmt.Errorf("setup request answered %q", b)
	}
	return nil
}

func runSlow(ctx context.Context, srv *child, addr string, sc slowScenario, n int, d time.Duration, out func(string, ...any)) error {
	srv.resetPeak()
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var open, answered atomic.Int64
	var wg sync.WaitGroup
	dialer := &net.Dialer{Timeout: 10 * time.Second}
	for i := 0; i < n; i++ {
		conn, err := dialer.DialContext(ctx, "tcp", addr)
		if err != nil {
			return fmt.Errorf("connection %d: %w", i, err)
		}
		open.Add(1)
		wg.Add(2)
		closed := make(chan struct{})
		go func() { // the server's side: an answer, then the end
			defer wg.Done()
			defer close(closed)
			b := make([]byte, 4096)
			first := true
			for {
				k, err := conn.Read(b)
				if k > 0 && first {
					answered.Add(1)
					first = false
				}
				if err != nil {
					open.Add(-1)
					return
				}
			}
		}()
		go func(i int) {
			defer wg.Done()
			defer conn.Close()
			if _, err := io.WriteString(conn, sc.head(i)); err != nil {
				return
			}
			t := time.NewTicker(sc.tick)
			defer t.Stop()
			for {
				if _, err := conn.Write(sc.chunk(i)); err != nil {
					<-closed
					return
				}
				select {
				case <-ctx.Done():
					return
				case <-closed:
					return
				case <-t.C:
				}
			}
		}(i)
	}
	start := time.Now()
	peakSeen := 0.0
	sample := time.NewTicker(time.Second)
	defer sample.Stop()
	next := 10 * time.Second
	for done := false; !done; {
		select {
		case <-ctx.Done():
			done = true
		case <-sample.C:
			peakSeen = max(peakSeen, srv.mem("VmRSS"))
			if el := time.Since(start); el >= next {
				out("  %-14s t=%3.0fs  open %4d  answered %4d  RSS %6.1f MiB", sc.name, el.Seconds(), open.Load(), answered.Load(), srv.mem("VmRSS"))
				next += 10 * time.Second
			}
		}
	}
	out("%-14s %d connections: peak RSS %.1f MiB (VmHWM %.1f MiB), %d still open after %s, %d answered",
		sc.name, n, peakSeen, srv.mem("VmHWM"), open.Load(), d, answered.Load())
	cancel()
	wg.Wait()
	time.Sleep(2 * time.Second) // let the server let go
	return nil
}
