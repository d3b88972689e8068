package sqlite

import (
	"runtime"
	"syscall"
)

// lowerPriority gives the calling goroutine a thread of its own with a
// lower scheduling priority (nice 10), so that a compaction yields the
// processors to the queries served meanwhile. The thread ends with the
// goroutine.
func lowerPriority() {
	runtime.LockOSThread()
	syscall.Setpriority(syscall.PRIO_PROCESS, syscall.Gettid(), 10)
}
