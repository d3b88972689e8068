package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// dataLock is the exclusive lock a process holds on a data directory
// (data/LOCK) while it uses it: one server at a time, so that two never
// serve one store (one of them from stale segments) and a starting server
// never sweeps another's spooled uploads. The lock is the kernel's (flock),
// so it goes with the process however the process ends; the file's text
// only says who holds it.
type dataLock struct{ f *os.File }

// errLocked is the error of lockData when another process holds the lock.
var errLocked = errors.New("data directory in use")

// lockData takes the lock on dir (created if missing) for what, which the
// file then names with the process id.
func lockData(dir, what string) (*dataLock, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	p := filepath.Join(dir, "LOCK")
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			holder, _ := os.ReadFile(p)
			h := strings.TrimSpace(string(bytes.ToValidUTF8(holder, nil)))
			if len(h) > 200 {
				h = h[:200]
			}
			if h == "" {
				h = "another process"
			}
			return nil, fmt.Errorf("%w: %s is held by %s", errLocked, p, h)
		}
		return nil, fmt.Errorf("locking %s: %w", p, err)
	}
	l := &dataLock{f: f}
	l.say(what)
	return l, nil
}

// say writes who holds the lock, e.g. "mapcommons serve (pid 42) on
// 127.0.0.1:8080 since …".
func (l *dataLock) say(what string) {
	l.f.Truncate(0)
	l.f.WriteAt([]byte(fmt.Sprintf("%s (pid %d) since %s\n", what, os.Getpid(), time.Now().UTC().Format(time.RFC3339))), 0)
}

// Close releases the lock.
func (l *dataLock) Close() error {
	if l == nil {
		return nil
	}
	l.f.Truncate(0)
	return l.f.Close() // closing the last descriptor releases the flock
}
