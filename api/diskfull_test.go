package api_test

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// tmpfs mounts a small tmpfs for the test, or skips when it cannot (not
// root, no mount).
func tmpfs(t *testing.T, size string) string {
	t.Helper()
	dir := t.TempDir()
	if os.Geteuid() != 0 {
		t.Skip("mounting a small file system needs root")
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
	return dir
}

// fill writes a file into dir until the disk is full and returns its path.
func fill(t *testing.T, dir string) string {
	t.Helper()
	p := filepath.Join(dir, "filler")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 64<<10)
	for {
		if _, err = f.Write(chunk); err != nil {
			break
		}
	}
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("filling the disk: %v", err)
	}
	// Small writes may still find room in the last blocks.
	for err == nil {
		_, err = f.Write(chunk[:512])
	}
	return p
}

func fileSize(t *testing.T, p string) int64 {
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// TestDiskFull: whichever write meets a full disk — the spooled upload,
// the segment, SQLite — the answer is 507 insufficient_storage, and
// nothing is left half written.
func TestDiskFull(t *testing.T) {
	dir := tmpfs(t, "8m")
	ts := newServerAt(t, dir)
	id := ts.createCSV("?title=Small", "lat,lon,name\n1,2,a\n3,4,b\n")

	var csv bytes.Buffer
	csv.WriteString("lat,lon,name\n")
	for i := 0; csv.Len() < 2<<20; i++ {
		fmt.Fprintf(&csv, "%d.5,%d.25,name number %d\n", i%80, i%170, i)
	}

	filler := fill(t, dir)
	w := ts.do(req{method: "POST", path: "/datasets.json?title=Big", user: "alice", ctype: "text/csv", body: csv.Bytes()})
	errorOf(t, w, http.StatusInsufficientStorage, "insufficient_storage", "disk is full")
	csvFile := filepath.Join(t.TempDir(), "big.csv")
	if err := os.WriteFile(csvFile, csv.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	mp, ctype := multipartBody(t, map[string]string{"dataset[csv]": csvFile}, map[string]string{"dataset[title]": "Big"})
	w = ts.do(req{method: "POST", path: "/datasets.json", user: "alice", ctype: ctype, body: mp})
	errorOf(t, w, http.StatusInsufficientStorage, "insufficient_storage", "disk is full")

	// The store's own disk: the embedded store's files are in dir (on
	// PostgreSQL the database's disk is the database's: its "disk full"
	// is translated to EFULL, tested in package postgres).
	if ts.store.sq != nil {
		// Room for the spooled body but not for the segment built from it.
		if err := os.Truncate(filler, fileSize(t, filler)-int64(csv.Len())-256<<10); err != nil {
			t.Fatal(err)
		}
		w = ts.do(req{method: "POST", path: "/datasets.json?title=Big", user: "alice", ctype: "text/csv", body: csv.Bytes()})
		errorOf(t, w, http.StatusInsufficientStorage, "insufficient_storage", "disk is full")
		os.Remove(filler)
		filler = fill(t, dir)

		// A metadata change too big for the room SQLite has left.
		desc := strings.Repeat("a long description ", 3400)
		w = ts.do(req{method: "PUT", path: id + ".json", user: "alice", ctype: "application/json",
			body: []byte(`{"dataset":{"title":"Changed","description":"` + desc + `"}}`)})
		if w.Code != http.StatusInsufficientStorage {
			t.Fatalf("title change on a full disk: %d %s", w.Code, w.Body)
		}
		errorOf(t, w, http.StatusInsufficientStorage, "insufficient_storage", "full")
	}

	// With room again: nothing of the failed requests is there.
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	left, _ := os.ReadDir(ts.tmp)
	if len(left) != 0 {
		t.Errorf("spool left %d files", len(left))
	}
	body := must(t, ts.get(id+".json", "alice"), http.StatusOK)
	if !bytes.Contains(body, []byte(`"Small"`)) || bytes.Contains(body, []byte("long description")) {
		t.Errorf("dataset changed by the failed update: %.200s", body)
	}
	body = must(t, ts.get("/search.json?q=Big", "alice"), http.StatusOK)
	if bytes.Contains(body, []byte(`"Big"`)) {
		t.Errorf("failed upload left a dataset: %.300s", body)
	}
	// And the server works again.
	ts.createCSV("?title=After", "lat,lon\n1,2\n")
}

// TestSignInDiskFull: with the disk full, a user still signs in (an
// administrator must be able to, to delete what fills it): the embedded
// store gives up the room it keeps in reserve for that, and the session
// works; other writes stay 507.
func TestSignInDiskFull(t *testing.T) {
	dir := tmpfs(t, "8m")
	ts := newServerAt(t, dir)
	if ts.store.sq == nil {
		t.Skip("on PostgreSQL the database's disk is the database's")
	}
	id := ts.createCSV("?title=Small", "lat,lon,name\n1,2,a\n")
	filler := fill(t, dir)
	w := ts.do(req{method: "PUT", path: id + ".json", user: "alice", ctype: "application/json",
		body: []byte(`{"dataset":{"description":"` + strings.Repeat("long ", 12000) + `"}}`)})
	errorOf(t, w, http.StatusInsufficientStorage, "insufficient_storage", "full")
	for i := range 3 {
		b := ts.mustSignIn("alice")
		if got := must(t, b.get("/session"), http.StatusOK); !bytes.Contains(got, []byte(`"alice"`)) {
			t.Fatalf("sign-in %d on a full disk: the session says %s", i, got)
		}
	}
	os.Remove(filler)
}
