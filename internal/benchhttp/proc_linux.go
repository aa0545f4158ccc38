package benchhttp

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// procSample is what the kernel counts for a set of processes.
type procSample struct {
	cpuTicks int64 // utime + stime, in clock ticks
	syscalls int64 // read-type + write-type calls (syscr + syscw): read, write, sendfile, ...
	rssKiB   int64 // VmRSS
	hwmKiB   int64 // VmHWM: peak RSS
}

// clockTicks is USER_HZ, 100 on every Linux architecture Go supports.
const clockTicks = 100

// procAvailable says whether sample can measure anything here.
const procAvailable = true

// sample sums the counters of pids.
func sample(pids []int) (procSample, error) {
	var s procSample
	for _, pid := range pids {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return s, err
		}
		// Fields after the command, which may hold spaces, in parentheses.
		i := bytes.LastIndexByte(stat, ')')
		f := strings.Fields(string(stat[i+1:]))
		if len(f) < 13 {
			return s, fmt.Errorf("short /proc/%d/stat", pid)
		}
		ut, _ := strconv.ParseInt(f[11], 10, 64)
		st, _ := strconv.ParseInt(f[12], 10, 64)
		s.cpuTicks += ut + st
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
