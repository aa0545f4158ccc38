package segment

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// compressor compresses sealed segments one at a time on its own
// goroutine, with one zstd encoder at the default level and concurrency 1
// (it must not starve the writer and the server on a small machine). For
// each "X.ndjson" it writes "X.ndjson.zst.tmp", fsyncs it, renames it to
// "X.ndjson.zst", fsyncs the directory and only then removes "X.ndjson"
// (and fsyncs the directory again). A crash at any step leaves either the
// plain segment alone, or a complete .zst beside it, which Open resolves.
type compressor struct {
	root *os.Root
	dir  string
	log  *slog.Logger
	c    *counters

	mu    sync.Mutex
	queue []string // relative paths of sealed plain segments, oldest first
	busy  bool     // a segment is being compressed

	wake    chan struct{} // capacity 1
	stop    chan struct{} // closed by close
	done    chan struct{} // closed when run returns
	enc     *zstd.Encoder // created on first use
	buf     []byte
	stopped bool // close was called; guarded by mu
}

// compressChunk is the read size; stop is checked between chunks.
const compressChunk = 256 << 10

var errAbandoned = errors.New("compression abandoned by Close")

func newCompressor(root *os.Root, dir string, log *slog.Logger, c *counters) *compressor {
	return &compressor{
		root: root, dir: dir, log: log, c: c,
		wake: make(chan struct{}, 1),
		stop: make(chan struct{}),
		done: make(chan struct{}),
	}
}

// add queues the sealed plain segment name (relative to DIR). It never
// blocks.
func (c *compressor) add(name string) {
	c.mu.Lock()
	if !c.stopped {
		c.queue = append(c.queue, name)
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
	for {
		c.mu.Lock()
		if len(c.queue) == 0 || c.stopped {
			c.mu.Unlock()
			select {
			case <-c.wake:
				continue
			case <-c.stop:
				return
			}
		}
		name := c.queue[0]
		c.queue = c.queue[1:]
		c.busy = true
		c.mu.Unlock()

		err := c.compress(name)
		switch {
		case errors.Is(err, errAbandoned):
			c.log.Debug("abandoned segment compression; the next Open redoes it", "file", filepath.Join(c.dir, name))
		case err != nil:
			c.log.Error("cannot compress segment; it stays plain until the next Open", "file", filepath.Join(c.dir, name), "err", err)
		}
		c.mu.Lock()
		c.busy = false
		c.mu.Unlock()
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
	tmp := zname + extTmp
	dst, err := c.root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			dst.Close()
			c.root.Remove(tmp)
		}
	}()
	if c.enc == nil {
		if c.enc, err = zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithEncoderLevel(zstd.SpeedFastest)); err != nil {
			return err
		}
		c.buf = make([]byte, compressChunk)
	}
	c.enc.ResetContentSize(dst, end)
	for off := int64(0); off < end; {
		select {
		case <-c.stop:
			return errAbandoned
		default:
		}
		p := c.buf[:min(int64(len(c.buf)), end-off)]
		if _, err := src.ReadAt(p, off); err != nil {
			return fmt.Errorf("cannot read: %w", err)
		}
		if _, err := c.enc.Write(p); err != nil {
			return fmt.Errorf("cannot write %s: %w", tmp, err)
		}
		off += int64(len(p))
	}
	if err := c.enc.Close(); err != nil {
		return fmt.Errorf("cannot write %s: %w", tmp, err)
	}
	if err := dst.Sync(); err != nil {
		return fmt.Errorf("cannot sync %s: %w", tmp, err)
	}
	zfi, err := dst.Stat()
	if err != nil {
		return err
	}
	if err := dst.Close(); err != nil {
		return fmt.Errorf("cannot close %s: %w", tmp, err)
	}
	if err := c.root.Rename(tmp, zname); err != nil {
		return err
	}
	day := filepath.Dir(name)
	if err := syncDir(c.root, day); err != nil {
		// The rename may not be durable: keep the plain segment, which
		// recovery prefers to nothing.
		return err
	}
	c.c.segmentBytes.Add(zfi.Size())
	if err := c.root.Remove(name); err != nil {
		// Readers and recovery prefer the .zst; the next Open removes it.
		return fmt.Errorf("cannot remove compressed segment: %w", err)
	}
	c.c.segmentBytes.Add(-size)
	if err := syncDir(c.root, day); err != nil {
		return err
	}
	return nil
}
