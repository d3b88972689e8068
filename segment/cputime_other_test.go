//go:build !unix

package segment

import "time"

var start = time.Now()

// cpuTime stands in for the CPU time where there is no getrusage.
func cpuTime() time.Duration { return time.Since(start) }
