package fileread

import (
	"context"
	"errors"
	"io"
	"sync"
	"time"
)

// LiveFlush is how long a chunk of a pipe or stdin waits for more bytes
// before the complete lines it holds are handed out: rows of `tail -f |
// spate query` show within about this long, and a fast pipe still fills
// whole chunks.
const LiveFlush = 50 * time.Millisecond

// errIdle is liveReader's answer when no byte came within LiveFlush.
var errIdle = errors.New("no input for a while")

// liveReader reads r on a goroutine of its own so that a read can give up
// waiting (errIdle) without losing bytes: the next Read returns them.
type liveReader struct {
	ctx     context.Context // a scan that ends (a limit, an error) ends Read
	ch      chan []byte     // blocks read; closed at the end
	free    chan []byte     // blocks read out, for the goroutine to reuse
	cur     []byte          // the block pending was cut from
	err     error           // the reading goroutine's final error, set before ch closes
	pending []byte
	timer   *time.Timer
	stop    chan struct{}
	once    sync.Once
}

func newLiveReader(ctx context.Context, r io.Reader) *liveReader {
	l := &liveReader{ctx: ctx, ch: make(chan []byte, 4), free: make(chan []byte, 6), stop: make(chan struct{})}
	go func() {
		defer close(l.ch)
		for {
			var b []byte
			select {
			case b = <-l.free:
			default:
				b = make([]byte, 64<<10)
			}
			n, err := r.Read(b[:cap(b)])
			if n > 0 {
				select {
				case l.ch <- b[:n]:
				case <-l.stop:
					return
				}
			}
			if err != nil {
				l.err = err
				return
			}
		}
	}()
	return l
}

// Read returns buffered bytes, or waits up to LiveFlush for more; then it
// returns errIdle, and the bytes stay for a later Read.
func (l *liveReader) Read(p []byte) (int, error) {
	if len(l.pending) == 0 {
		if l.timer == nil {
			l.timer = time.NewTimer(LiveFlush)
		} else {
			l.timer.Reset(LiveFlush)
		}
		select {
		case b, ok := <-l.ch:
			l.timer.Stop()
			if !ok {
				if l.err == nil {
					return 0, io.EOF
				}
				return 0, l.err
			}
			l.pending, l.cur = b, b
		case <-l.timer.C:
			return 0, errIdle
		case <-l.ctx.Done():
			l.timer.Stop()
			return 0, l.ctx.Err()
		}
	}
	n := copy(p, l.pending)
	l.pending = l.pending[n:]
	if len(l.pending) == 0 && l.cur != nil {
		select {
		case l.free <- l.cur[:0]:
		default:
		}
		l.cur = nil
	}
	return n, nil
}

// close stops the reading goroutine once it returns from its read.
func (l *liveReader) close() { l.once.Do(func() { close(l.stop) }) }
