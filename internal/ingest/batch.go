package ingest

import (
	"time"

	"github.com/spate-io/spate/internal/segment"
)

const nsPerDay = int64(24 * time.Hour)

// Batch collects one request's stored lines by UTC day, ready for
// segment.Store.Append. The zero Batch is empty and ready; Reset reuses its
// buffers. Not safe for concurrent use.
type Batch struct {
	// Tenant is set on every group Groups returns.
	Tenant segment.Tenant

	groups []segment.Group
	days   []int64 // day number (Unix ns / nsPerDay) of each group
	n      int     // groups in use
	Lines  int     // lines added
	Bytes  int64   // bytes added
}

// Add copies line and a '\n' into the group of the day of ts (Unix ns).
func (b *Batch) Add(line []byte, ts int64) {
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
		}
		g = b.n
		b.n++
		b.days[g] = day
		b.groups[g].Day = segment.DayOf(time.Unix(0, day*nsPerDay))
		b.groups[g].Lines = b.groups[g].Lines[:0]
	}
	b.groups[g].Lines = append(append(b.groups[g].Lines, line...), '\n')
	b.Lines++
	b.Bytes += int64(len(line)) + 1
}

// Groups returns the groups to append, of b.Tenant; valid until the next
// Add or Reset.
func (b *Batch) Groups() []segment.Group {
	g := b.groups[:b.n]
	for i := range g {
		g[i].Tenant = b.Tenant
	}
	return g
}

// Reset empties b, keeping its buffers, and sets its tenant to 0:0.
func (b *Batch) Reset() {
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
