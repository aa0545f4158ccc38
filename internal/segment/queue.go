package segment

// The queue between Append and the writer is a list of batches. Append
// copies a request's lines into the last pending batch, one growing buffer
// per day, so that the writer can write each day of a batch with a single
// write(2) and acknowledge the whole batch by closing one channel. Every
// field here is guarded by Store.mu, except a batch the writer has taken
// (see Store.take), which only the writer touches.

// result is the outcome of one batch, shared by its requests. err is set
// before done is closed and never changes after.
type result struct {
	done chan struct{}
	err  error
}

// batch is a group of requests written together.
type batch struct {
	days  []*dayBuf // in order of first appearance; usually one
	bytes int64
	lines int64
	reqs  int
	res   *result
	// marks are the requests' marks, latest per key; nil if none.
	marks map[string]int64
}

func newBatch() *batch {
	return &batch{res: &result{done: make(chan struct{})}}
}

// dayBuf holds one tenant's lines of one day within a batch.
type dayBuf struct {
	tenant Tenant
	day    string
	buf    []byte
	// ends are the offsets in buf where each request's lines for this day
	// end: the writer may start a new segment only at one of them. sums
	// are those requests' summaries, for the segment metadata.
	ends []int
	sums []groupSum
	// marked: the request being added has lines for this day; cur sums
	// them.
	marked bool
	cur    groupSum
}

// maxFreeDayBufs bounds the reusable day buffers kept by the store, and
// maxFreeDayBufCap their capacity, so idle memory stays bounded too.
const (
	maxFreeDayBufs   = 4
	maxFreeDayBufCap = 2 * maxBatchBytes
)

// addLocked copies recs, of counts[i] lines each, into b. s.mu must be
// held.
func (s *Store) addLocked(b *batch, recs []Group, counts []int64) {
	for i := range recs {
		g := &recs[i]
		if len(g.Lines) == 0 {
			continue
		}
		d := s.dayLocked(b, g.Tenant, g.Day)
		d.buf = append(d.buf, g.Lines...)
		gs := groupSum{lines: counts[i], minT: g.MinTime, maxT: g.MaxTime, hasTime: g.HasTime}
		if g.Streams != nil {
			gs.streams = append(make([]string, 0, len(g.Streams)), g.Streams...)
		}
		if !d.marked {
			d.cur, d.marked = gs, true
			continue
		}
		// Slow path: two groups of one tenant and day in one request.
		var sum summary
		sum.addGroup(&d.cur)
		sum.addGroup(&gs)
		m := sum.meta(0, false)
		d.cur = groupSum{lines: m.Lines, minT: m.MinTime, maxT: m.MaxTime, hasTime: m.HasTime}
		if m.StreamsKnown {
			d.cur.streams = m.Streams
		}
	}
	for _, d := range b.days {
		if d.marked {
			d.ends = append(d.ends, len(d.buf))
			d.sums = append(d.sums, d.cur)
			d.marked, d.cur = false, groupSum{}
		}
	}
}

// dayLocked returns b's buffer for tenant and day, adding one (reused if
// possible).
func (s *Store) dayLocked(b *batch, t Tenant, day string) *dayBuf {
	for _, d := range b.days {
		if d.day == day && d.tenant == t {
			return d
		}
	}
	var d *dayBuf
	if k := len(s.free); k > 0 {
		d = s.free[k-1]
		s.free[k-1] = nil
		s.free = s.free[:k-1]
	} else {
		d = &dayBuf{}
	}
	d.tenant, d.day = t, day
	b.days = append(b.days, d)
	return d
}

// putDayBufLocked resets d and keeps it for reuse if there is room.
func (s *Store) putDayBufLocked(d *dayBuf) {
	if len(s.free) >= maxFreeDayBufs || cap(d.buf) > maxFreeDayBufCap {
		return
	}
	d.tenant, d.day = Tenant{}, ""
	d.buf = d.buf[:0]
	d.ends = d.ends[:0]
	clear(d.sums)
	d.sums = d.sums[:0]
	d.marked, d.cur = false, groupSum{}
	s.free = append(s.free, d)
}

// take removes and returns the oldest pending batch; from then on only the
// writer touches it and Append starts a new batch. With nothing pending it
// returns nil and whether the store is closed.
func (s *Store) take() (b *batch, closed bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.pending) == 0 {
		return nil, s.closed
	}
	b = s.pending[0]
	copy(s.pending, s.pending[1:])
	s.pending[len(s.pending)-1] = nil
	s.pending = s.pending[:len(s.pending)-1]
	return b, false
}

// finish acknowledges (err == nil) or fails every request in b, releases
// its queue space and recycles its buffers.
// The space is released first, so that a caller that sees its Append
// return also sees the queue without its request.
func (s *Store) finish(b *batch, err error) {
	s.mu.Lock()
	s.queueBytes -= b.bytes
	s.queueReqs -= b.reqs
	for _, d := range b.days {
		s.putDayBufLocked(d)
	}
	if s.waiters > 0 {
		close(s.room)
		s.room = make(chan struct{})
	}
	s.mu.Unlock()
	b.res.err = err
	close(b.res.done)
}
