package benchhttp

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spate-io/spate/internal/benchenv"
)

// procSample is what the kernel counts for a set of processes.
type procSample struct {
	cpu      time.Duration // utime + stime
	syscalls int64         // read-type + write-type calls (syscr + syscw): read, write, sendfile, ...
	rssKiB   int64         // VmRSS
	hwmKiB   int64         // VmHWM: peak RSS
}

// procAvailable says whether sample can measure anything here.
const procAvailable = true

// sample sums the counters of pids.
func sample(pids []int) (procSample, error) {
	var s procSample
	for _, pid := range pids {
		cpu, err := benchenv.ProcessCPU(pid)
		if err != nil {
			return s, err
		}
		s.cpu += cpu
		io, err := os.ReadFile(fmt.Sprintf("/proc/%d/io", pid))
		if err != nil {
			return s, err
		}
		s.syscalls += field(io, "syscr:") + field(io, "syscw:")
		status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		if err != nil {
			return s, err
		}
		s.rssKiB += field(status, "VmRSS:")
		s.hwmKiB += field(status, "VmHWM:")
	}
	return s, nil
}

// field returns the number after name at the start of a line of b.
func field(b []byte, name string) int64 {
	for line := range bytes.Lines(b) {
		if v, ok := bytes.CutPrefix(line, []byte(name)); ok {
			n, _ := strconv.ParseInt(strings.Fields(string(v))[0], 10, 64)
			return n
		}
	}
	return 0
}

// children returns the pids of pid's child processes (nginx's workers).
func children(pid int) []int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
	if err != nil {
		return nil
	}
	var out []int
	for _, f := range strings.Fields(string(b)) {
		if n, err := strconv.Atoi(f); err == nil {
			out = append(out, n)
		}
	}
	return out
}
