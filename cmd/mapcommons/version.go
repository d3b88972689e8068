package main

import (
	"fmt"
	"runtime/debug"
)

// version describes this binary from its build information: the module's
// version ("(devel)" for a build from a checkout), the VCS revision and
// time, whether the tree had uncommitted changes, and the Go version.
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "mapcommons (no build information)"
	}
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	out := "mapcommons " + v
	var rev, at, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+dirty"
			}
		}
	}
	if rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		out += fmt.Sprintf(" revision %s%s", rev, dirty)
		if at != "" {
			out += " (" + at + ")"
		}
	}
	return out + " " + bi.GoVersion
}
