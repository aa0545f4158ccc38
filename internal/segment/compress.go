package segment

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/spate-io/spate/internal/segindex"
)

// compressor compresses sealed segments one at a time on its own
// goroutine, on a thread of lower CPU priority (see lowerPriority), with
// one zstd encoder at the fastest level and concurrency 1: it must not
// starve the writer and the server on a small machine. For
// each "X.ndjson" it writes "X.ndjson.zst.tmp", fsyncs it, renames it to
// "X.ndjson.zst", fsyncs the directory and only then removes "X.ndjson"
// (and fsyncs the directory again). A crash at any step leaves either the
// plain segment alone, or a complete .zst beside it, which Open resolves.
//
// The plain segment is removed removeDelay after the rename, not at once:
// a reader listing the directory while both happen could otherwise see
// neither name (readdir does not see a directory change atomically), and
// miss the segment. With the delay, a listing that takes less than it sees
// at least one of them.
type compressor struct {
	root *os.Root
	dir  string
	log  *slog.Logger
	c    *counters
	// compressDelay: a sealed segment is compressed this long after it is
	// queued; removeDelay: its plain file is removed this long after.
	compressDelay, removeDelay time.Duration

	mu       sync.Mutex
	queue    []pendingSeg // sealed plain segments to compress, oldest first
	busy     bool         // a segment is being compressed
	removals []removal    // compressed plain segments to remove, oldest first

	wake chan struct{}    // capacity 1
	stop chan struct{}    // closed by close
	done chan struct{}    // closed when run returns
	enc  *zstd.Encoder    // created on first use
	buf  []byte           // block buffer (see frames)
	zbuf []byte           // one compressed block (its frames)
	fr   []segindex.Frame // the frames of zbuf
	// index reads lines for segment sidecars; nil writes none. numbers
	// parses numbers for their numeric ranges (Options.IndexNumbers).
	index   segindex.LineReader
	numbers func(string) (float64, bool)
	stopped bool // close was called; guarded by mu
}

// defaultRemoveDelay is how long a compressed plain segment stays beside
// its .zst (see compressor).
const defaultRemoveDelay = 10 * time.Second

// pendingSeg is a sealed plain segment waiting for compression.
type pendingSeg struct {
	name    string
	at      time.Time // not before
	reindex bool      // name is a .zst to rewrite with a sidecar (see reindex)
}

// removal is a compressed plain segment waiting for removal.
type removal struct {
	name string
	size int64
	at   time.Time
}

var errAbandoned = errors.New("compression abandoned by Close")

func newCompressor(root *os.Root, dir string, log *slog.Logger, c *counters, compressDelay, removeDelay time.Duration, index segindex.LineReader, numbers func(string) (float64, bool)) *compressor {
	return &compressor{
		root: root, dir: dir, log: log, c: c, compressDelay: compressDelay, removeDelay: removeDelay, index: index, numbers: numbers,
		wake: make(chan struct{}, 1),
		stop: make(chan struct{}),
		done: make(chan struct{}),
	}
}

// add queues the sealed plain segment name (relative to DIR). It never
// blocks.
func (c *compressor) add(name string) {
	c.enqueue(pendingSeg{name: name, at: time.Now().Add(c.compressDelay)})
}

// addReindex queues the compressed segment name for reindex. It never
// blocks.
func (c *compressor) addReindex(name string) {
	c.enqueue(pendingSeg{name: name, reindex: true})
}

func (c *compressor) enqueue(p pendingSeg) {
	c.mu.Lock()
	if !c.stopped {
		c.queue = append(c.queue, p)
	}
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// pending returns how many segments wait for or are in compression.
func (c *compressor) pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := len(c.queue)
	if c.busy {
		n++
	}
	return n
}

// close abandons the segment in progress and the queue (the next Open
// finds them plain and queues them again) and waits for run to return.
func (c *compressor) close() {
	c.mu.Lock()
	c.stopped = true
	c.queue = nil
	c.mu.Unlock()
	close(c.stop)
	<-c.done
}

func (c *compressor) run() {
	defer close(c.done)
	lowerPriority()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		now := time.Now()
		c.removeDue(now)
		c.mu.Lock()
		if c.stopped || len(c.queue) == 0 || c.queue[0].at.After(now) {
			// Wait for work, or for the next compression or removal due.
			var next time.Time
			if !c.stopped && len(c.queue) > 0 {
				next = c.queue[0].at
			}
			if !c.stopped && len(c.removals) > 0 && (next.IsZero() || c.removals[0].at.Before(next)) {
				next = c.removals[0].at
			}
			var due <-chan time.Time
			if !next.IsZero() {
				timer.Reset(time.Until(next))
				due = timer.C
			}
			c.mu.Unlock()
			select {
			case <-c.wake:
			case <-due:
			case <-c.stop:
				return
			}
			continue
		}
		job := c.queue[0]
		name := job.name
		c.queue = c.queue[1:]
		c.busy = true
		c.mu.Unlock()

		var err error
		if job.reindex {
			err = c.reindex(name)
		} else {
			err = c.compress(name)
		}
		switch {
		case errors.Is(err, errAbandoned):
			c.log.Debug("abandoned segment compression; the next Open redoes it", "file", filepath.Join(c.dir, name))
		case err != nil:
			if job.reindex {
				c.log.Error("cannot index segment; queries read it without an index until the next Open", "file", filepath.Join(c.dir, name), "err", err)
			} else {
				c.log.Error("cannot compress segment; it stays plain until the next Open", "file", filepath.Join(c.dir, name), "err", err)
			}
		}
		c.mu.Lock()
		c.busy = false
		c.mu.Unlock()
	}
}

// removeDue removes the compressed plain segments whose delay has passed
// (all of them if the delay is 0). A failure is logged; the next Open
// removes the file.
func (c *compressor) removeDue(now time.Time) {
	c.mu.Lock()
	var due []removal
	for len(c.removals) > 0 && !c.removals[0].at.After(now) {
		due = append(due, c.removals[0])
		c.removals = c.removals[1:]
	}
	c.mu.Unlock()
	for _, r := range due {
		if err := c.root.Remove(r.name); err != nil {
			c.log.Warn("cannot remove compressed segment; the next Open removes it", "file", filepath.Join(c.dir, r.name), "err", err)
			continue
		}
		c.c.segmentBytes.Add(-r.size)
		if err := syncDir(c.root, filepath.Dir(r.name)); err != nil {
			c.log.Warn("cannot sync directory after removing a compressed segment", "err", err)
		}
	}
}

// compress replaces the plain segment name with name+".zst" holding the
// same bytes. A torn last line (left by a failed rollback) is not copied.
func (c *compressor) compress(name string) (err error) {
	src, err := c.root.Open(name)
	if err != nil {
		return err
	}
	defer src.Close()
	fi, err := src.Stat()
	if err != nil {
		return err
	}
	size := fi.Size()
	end, err := lastLineEnd(src, size)
	if err != nil {
		return fmt.Errorf("cannot read tail: %w", err)
	}
	if end < size {
		c.log.Warn("compressing segment without its torn last line", "file", filepath.Join(c.dir, name), "size", size, "kept", end)
	}

	zname := strings.TrimSuffix(name, extPlain) + extZstd
	zsize, err := c.writeFramed(io.NewSectionReader(src, 0, end), zname)
	if err != nil {
		return err
	}
	day := filepath.Dir(name)
	if err := syncDir(c.root, day); err != nil {
		// The rename may not be durable: keep the plain segment, which
		// recovery prefers to nothing.
		return err
	}
	c.c.segmentBytes.Add(zsize)
	// Readers and recovery prefer the .zst; the plain file goes later (see
	// compressor), or at the next Open.
	c.mu.Lock()
	c.removals = append(c.removals, removal{name: name, size: size, at: time.Now().Add(c.removeDelay)})
	c.mu.Unlock()
	if c.removeDelay == 0 {
		c.removeDue(time.Now())
	}
	return nil
}
