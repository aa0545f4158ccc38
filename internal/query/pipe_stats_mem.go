package query

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
)

// memTracker counts the bytes held by exact stats state across all workers
// of a run and says when to switch to sketches: from the start with
// Options.Approx, or once Options.MaxMemory is exceeded.
type memTracker struct {
	shared *memShared
	local  int64 // bytes not yet added to shared (one tracker per worker)
}

// memFlush is how many bytes a tracker gathers before adding them to the
// shared count: an atomic add per new group made two workers fight over one
// cache line.
const memFlush = 1 << 20

// memShared is the run-wide part of memTracker.
type memShared struct {
	limit  int64
	used   atomic.Int64
	approx atomic.Bool
	mu     sync.Mutex
	why    map[string]struct{}
}

func newMemTracker(p *plan) *memTracker {
	if p.mem == nil {
		p.mem = &memShared{limit: p.opts.MaxMemory, why: map[string]struct{}{}}
		if p.opts.Approx {
			p.mem.approx.Store(true)
		}
	}
	return &memTracker{shared: p.mem}
}

// add records n more bytes of exact state.
func (m *memTracker) add(n int64) {
	m.local += n
	s := m.shared
	if m.local < memFlush && (s.limit == 0 || 8*m.local < s.limit) {
		return
	}
	if u := s.used.Add(m.local); s.limit > 0 && u > s.limit && !s.approx.Load() {
		s.approx.Store(true)
	}
	m.local = 0
}

// sketch reports whether exact states should now turn into sketches.
func (m *memTracker) sketch() bool { return m.shared.approx.Load() }

// note records that a result is approximate.
func (m *memTracker) note(what string) {
	s := m.shared
	s.mu.Lock()
	s.why[what] = struct{}{}
	s.mu.Unlock()
}

func (m *memTracker) approximations() []string {
	s := m.shared
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	reason := "--approx"
	if s.limit > 0 && s.used.Load() > s.limit {
		reason = fmt.Sprintf("exact state passed --max-memory=%d bytes", s.limit)
	}
	for w := range s.why {
		out = append(out, w+": "+reason)
	}
	slices.Sort(out)
	return out
}
