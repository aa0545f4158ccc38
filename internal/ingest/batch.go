package ingest

import (
	"bytes"
	"time"

	"github.com/spate-io/spate/internal/segment"
)

const nsPerDay = int64(24 * time.Hour)

// Batch collects one request's stored lines by UTC day, ready for
// segment.Store.Append, with each day's summary for the segment metadata
// (the range of the lines' times and their distinct streams). The zero
// Batch is empty and ready; Reset reuses its buffers. Not safe for
// concurrent use.
type Batch struct {
	// Tenant is set on every group Groups returns.
	Tenant segment.Tenant

	groups []segment.Group
	days   []int64      // day number (Unix ns / nsPerDay) of each group
	sums   []daySummary // of each group
	n      int          // groups in use
	Lines  int          // lines added
	Bytes  int64        // bytes added
}

// daySummary is what a group's metadata needs: its distinct streams ("{}"
// for lines without one) and, for each, whether it was just seen (lines of
// one stream often follow each other).
type daySummary struct {
	streams map[string]struct{}
	last    []byte
	hasLast bool
}

// emptyStream is the stream of lines without _stream.
const emptyStream = "{}"

// Add copies line and a '\n' into the group of the day of ts (Unix ns),
// whose _stream is stream (nil: the stream {}).
func (b *Batch) Add(line []byte, ts int64, stream []byte) {
	day := ts / nsPerDay
	if ts < 0 && ts%nsPerDay != 0 {
		day-- // floor for times before 1970
	}
	g := -1
	// Fast path: the day of the previous line. Requests span few days.
	for i := b.n - 1; i >= 0; i-- {
		if b.days[i] == day {
			g = i
			break
		}
	}
	if g < 0 {
		if b.n == len(b.groups) {
			b.groups = append(b.groups, segment.Group{})
			b.days = append(b.days, 0)
			b.sums = append(b.sums, daySummary{streams: map[string]struct{}{}})
		}
		g = b.n
		b.n++
		b.days[g] = day
		gr := &b.groups[g]
		gr.Day = segment.DayOf(time.Unix(0, day*nsPerDay))
		gr.Lines = gr.Lines[:0]
		gr.MinTime, gr.MaxTime, gr.HasTime = ts, ts, true
	}
	gr := &b.groups[g]
	gr.Lines = append(append(gr.Lines, line...), '\n')
	gr.MinTime, gr.MaxTime = min(gr.MinTime, ts), max(gr.MaxTime, ts)
	if stream == nil {
		stream = []byte(emptyStream)
	}
	if sum := &b.sums[g]; !sum.hasLast || !bytes.Equal(stream, sum.last) {
		if _, ok := sum.streams[string(stream)]; !ok {
			sum.streams[string(stream)] = struct{}{}
		}
		sum.last, sum.hasLast = append(sum.last[:0], stream...), true
	}
	b.Lines++
	b.Bytes += int64(len(line)) + 1
}

// Groups returns the groups to append, of b.Tenant, with their summaries;
// valid until the next Add or Reset.
func (b *Batch) Groups() []segment.Group {
	g := b.groups[:b.n]
	for i := range g {
		g[i].Tenant = b.Tenant
		g[i].Streams = g[i].Streams[:0]
		for s := range b.sums[i].streams {
			g[i].Streams = append(g[i].Streams, s)
		}
	}
	return g
}

// Reset empties b, keeping its buffers, and sets its tenant to 0:0.
func (b *Batch) Reset() {
	for i := range b.n {
		clear(b.sums[i].streams)
		b.sums[i].hasLast = false
	}
	b.n, b.Lines, b.Bytes = 0, 0, 0
	b.Tenant = segment.Tenant{}
}

// Cap returns the bytes of buffer b holds, for pooling decisions.
func (b *Batch) Cap() int {
	n := 0
	for _, g := range b.groups {
		n += cap(g.Lines)
	}
	return n
}
