package benchio

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spate-io/spate/internal/fileread"
)

// Works lists the workloads a run can apply to every chunk.
var Works = []string{"lines"}

// ChildSpec describes one measured run; the parent passes it to the child
// process as JSON.
type ChildSpec struct {
	Paths      []string `json:"paths"`
	Strategy   string   `json:"strategy"` // a fileread strategy, MmapWhole or Ceiling
	Workers    int      `json:"workers"`
	ChunkSize  int      `json:"chunk_size,omitempty"`
	MmapWindow int64    `json:"mmap_window,omitempty"`
	Work       string   `json:"work"`
}

// ChildResult is what a child prints on stdout, as one JSON object.
type ChildResult struct {
	Bytes     int64   `json:"bytes"`
	Lines     int64   `json:"lines"`
	Chunks    int64   `json:"chunks"`
	WallNS    int64   `json:"wall_ns"`
	LatNS     []int64 `json:"lat_ns,omitempty"`
	ReadBytes int64   `json:"read_bytes"` // /proc/self/io read_bytes: bytes this process caused to be read from storage
	GCPercent int     `json:"gc_percent"` // the GC percent in effect (-1: GOGC=off), as the child saw it
}

// RunChild performs the run spec describes in this process and writes a
// ChildResult as JSON to w. It is the body of the hidden `spate bench
// io-child` command.
func RunChild(ctx context.Context, spec ChildSpec, w io.Writer) error {
	if spec.Work != "lines" {
		return fmt.Errorf("unknown work %q: want one of %s", spec.Work, strings.Join(Works, ", "))
	}
	var res ChildResult
	var err error
	if spec.Strategy == Ceiling || spec.Strategy == CeilingPrefaulted {
		res, err = runCeiling(spec)
	} else {
		start := time.Now()
		res, err = runScan(ctx, spec)
		res.WallNS = time.Since(start).Nanoseconds()
	}
	if err != nil {
		return err
	}
	res.ReadBytes = procReadBytes()
	res.GCPercent = debug.SetGCPercent(-1) // read it; the process exits next
	debug.SetGCPercent(res.GCPercent)
	return json.NewEncoder(w).Encode(res)
}

// runScan counts lines with fileread.Scan, touching every byte.
func runScan(ctx context.Context, spec ChildSpec) (ChildResult, error) {
	cfg := fileread.Config{
		Workers:    spec.Workers,
		ChunkSize:  spec.ChunkSize,
		MmapWindow: spec.MmapWindow,
		Latencies:  true,
	}
	if spec.Strategy == MmapWhole {
		cfg.Strategy, cfg.MmapWindow = fileread.Mmap, -1
	} else {
		s, err := fileread.ParseStrategy(spec.Strategy)
		if err != nil {
			return ChildResult{}, err
		}
		cfg.Strategy = s
	}
	// One padded counter per worker: no shared cache line on the hot path.
	counts := make([]struct {
		n int64
		_ [56]byte
	}, cfg.Workers)
	st, err := fileread.Scan(ctx, spec.Paths, cfg, func(worker int, c *fileread.Chunk) error {
		counts[worker].n += int64(fileread.CountLines(c.Data))
		return nil
	})
	if err != nil {
		return ChildResult{}, err
	}
	res := ChildResult{Bytes: st.Bytes, Chunks: st.Chunks, LatNS: make([]int64, len(st.Latencies))}
	for _, c := range counts {
		res.Lines += c.n
	}
	for i, d := range st.Latencies {
		res.LatNS[i] = d.Nanoseconds()
	}
	return res, nil
}

// runCeiling counts each file's newlines with bytes.Count over a mapping
// of the whole file, split into equal byte ranges, one goroutine each: no
// chunking and no line handling. For Ceiling the mapping is fresh and the
// timing covers mapping, the page faults the count takes, and unmapping,
// as any mmap reader pays. For CeilingPrefaulted the page tables are filled
// first (MAP_POPULATE) and only the count is timed: the cost of the work on
// bytes already in memory, a bound no reader of a fresh mapping can reach.
func runCeiling(spec ChildSpec) (ChildResult, error) {
	prefault := spec.Strategy == CeilingPrefaulted
	var res ChildResult
	for _, p := range spec.Paths {
		start := time.Now()
		m, err := fileread.MapFile(p, prefault)
		if err != nil {
			return res, err
		}
		if prefault {
			start = time.Now()
		}
		data := m.Bytes
		n := max(spec.Workers, 1)
		counts := make([]int64, n)
		var wg sync.WaitGroup
		for i := range n {
			lo, hi := len(data)*i/n, len(data)*(i+1)/n
			wg.Add(1)
			go func() {
				defer wg.Done()
				counts[i] = int64(bytes.Count(data[lo:hi], []byte{'\n'}))
			}()
		}
		wg.Wait()
		if prefault {
			res.WallNS += time.Since(start).Nanoseconds()
		}
		for _, c := range counts {
			res.Lines += c
		}
		if len(data) > 0 && data[len(data)-1] != '\n' {
			res.Lines++
		}
		res.Bytes += int64(len(data))
		res.Chunks += int64(n)
		if err := m.Close(); err != nil {
			return res, fmt.Errorf("cannot unmap %q: %w", p, err)
		}
		if !prefault {
			res.WallNS += time.Since(start).Nanoseconds()
		}
	}
	return res, nil
}

// procReadBytes returns read_bytes from /proc/self/io, or -1 where it is not
// available.
func procReadBytes() int64 {
	b, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "read_bytes: "); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err == nil {
				return n
			}
		}
	}
	return -1
}
