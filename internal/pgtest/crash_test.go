package pgtest

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReportCrashes: the lines of a server's log about a process that
// ended abnormally come out with what the log said before them; a log
// without one says nothing.
func TestReportCrashes(t *testing.T) {
	dir := t.TempDir()
	crashed := filepath.Join(dir, "crashed.log")
	os.WriteFile(crashed, []byte("LOG:  checkpoint starting\nLOG:  statement: CREATE INDEX CONCURRENTLY x\n"+
		"LOG:  server process (PID 42) was terminated by signal 11: Segmentation fault\nLOG:  terminating any other active server processes\n"), 0o644)
	quiet := filepath.Join(dir, "quiet.log")
	os.WriteFile(quiet, []byte("LOG:  database system is ready to accept connections\nLOG:  received fast shutdown request\n"), 0o644)
	var out bytes.Buffer
	reportCrashes(&out, crashed)
	if s := out.String(); !strings.Contains(s, "signal 11") || !strings.Contains(s, "CREATE INDEX CONCURRENTLY x") {
		t.Errorf("crash report %q", s)
	}
	out.Reset()
	reportCrashes(&out, quiet)
	reportCrashes(&out, filepath.Join(dir, "absent.log"))
	if out.Len() != 0 {
		t.Errorf("report of a log without a crash: %q", out.String())
	}
}
