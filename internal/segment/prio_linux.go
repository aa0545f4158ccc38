package segment

import (
	"runtime"

	"golang.org/x/sys/unix"
)

// compressNice is the nice value of the compressor's thread: compression
// is background work that must not take CPU from ingestion (on 2 cores, a
// compressor at the same priority slowed a 1 GiB upload by a quarter).
const compressNice = 10

// lowerPriority pins the calling goroutine to its OS thread for good and
// lowers that thread's CPU priority. The goroutine must exit without
// unlocking, so that the runtime ends the thread instead of giving its low
// priority to other goroutines. Failure (no permission) is ignored: the
// work runs at normal priority.
func lowerPriority() {
	runtime.LockOSThread()
	unix.Setpriority(unix.PRIO_PROCESS, unix.Gettid(), compressNice)
}
