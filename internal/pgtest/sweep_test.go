package pgtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// TestSweep checks that the directory of a test binary that is gone is
// removed, and that of a live one kept.
func TestSweep(t *testing.T) {
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Skip("no true(1):", err)
	}
	mk := func(pid int) string {
		dir, err := os.MkdirTemp(os.TempDir(), dirPrefix)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
		if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte(strconv.Itoa(pid)), 0o644); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	gone, live := mk(dead.Process.Pid), mk(os.Getpid())
	sweep()
	if _, err := os.Stat(gone); !os.IsNotExist(err) {
		t.Errorf("the directory of a process that is gone stays: %v", err)
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("the directory of a live process went: %v", err)
	}
}
