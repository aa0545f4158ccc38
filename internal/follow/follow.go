// Package follow reads log files as they grow, as tail -F does: it keeps
// reading a file past its end, follows it through rotation by rename and
// create (the old file is read to its end first) and by copytruncate (a
// file that shrinks is read again from its start), and picks up files
// that appear later. It writes whole lines only, so the lines of several
// files never mix within a line. It powers `spate query -f`.
package follow

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"
)

// Config says what to follow.
type Config struct {
	// Paths lists the files to follow; it is called at start and every
	// Rescan, so that globs and directories pick up new files. Files that
	// appear after the start are read from their beginning.
	Paths func() ([]string, error)
	// Tail is how many of the last lines of each file present at the
	// start are written first (0: none, start at the end).
	Tail int
	// Poll is how often files are checked for new bytes; default 100 ms.
	// Rescan is how often Paths is called again; default 1 s.
	Poll, Rescan time.Duration
	// Warn receives one line per file that cannot be read; nil: none.
	Warn io.Writer
	// Convert, when set, is called each time a file is opened or found
	// truncated, with the file; the function it returns (nil: none) turns
	// each complete line of it (without its newline; off is where the line
	// starts in the file) into the bytes to write, appended to dst with
	// their newline, or reports false to leave the line out. It lets lines
	// of several formats (logfmt, CSV with the header of its own file)
	// share one stream.
	Convert func(path string, h *os.File) ConvertFunc
}

// ConvertFunc converts one line; see Config.Convert.
type ConvertFunc func(dst, line []byte, off int64) ([]byte, bool)

// file is one followed path.
type file struct {
	path    string
	f       *os.File
	id      fileID
	off     int64
	partial []byte // a line not yet ended
	conv    ConvertFunc
}

// fileID tells files apart across renames: device and inode.
type fileID struct{ dev, ino uint64 }

// Run follows cfg's files and writes their lines to w until ctx ends (it
// then returns nil) or a write fails.
func Run(ctx context.Context, cfg Config, w io.Writer) error {
	if cfg.Poll <= 0 {
		cfg.Poll = 100 * time.Millisecond
	}
	if cfg.Rescan <= 0 {
		cfg.Rescan = time.Second
	}
	fl := &follower{cfg: cfg, w: w, files: map[string]*file{}, buf: make([]byte, 256<<10)}
	defer fl.closeAll()
	if err := fl.rescan(true); err != nil {
		return err
	}
	poll := time.NewTicker(cfg.Poll)
	defer poll.Stop()
	lastScan := time.Now()
	for {
		if err := fl.pollAll(); err != nil {
			return err
		}
		if time.Since(lastScan) >= cfg.Rescan {
			lastScan = time.Now()
			if err := fl.rescan(false); err != nil {
				return err
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-poll.C:
		}
	}
}

type follower struct {
	cfg   Config
	w     io.Writer
	files map[string]*file
	order []string // paths in the order they were added
	buf   []byte
	out   []byte
	line  []byte
}

func (fl *follower) warn(format string, args ...any) {
	if fl.cfg.Warn != nil {
		fmt.Fprintf(fl.cfg.Warn, "spate: "+format+"\n", args...)
	}
}

// rescan adds the paths not followed yet: at the start from their last
// Tail lines, later from their beginning.
func (fl *follower) rescan(start bool) error {
	paths, err := fl.cfg.Paths()
	if err != nil {
		if start {
			return err
		}
		fl.warn("%v", err)
		return nil
	}
	for _, p := range paths {
		if _, ok := fl.files[p]; ok {
			continue
		}
		f := &file{path: p}
		fl.files[p] = f
		fl.order = append(fl.order, p)
		if err := fl.open(f, start); err != nil {
			fl.warn("%s: %v", p, err)
		}
	}
	return nil
}

// open opens f's path; at the start it seeks to its last Tail lines.
func (fl *follower) open(f *file, atStart bool) error {
	h, err := os.Open(f.path)
	if err != nil {
		return err
	}
	fi, err := h.Stat()
	if err != nil {
		h.Close()
		return err
	}
	f.f, f.id, f.off, f.partial = h, idOf(fi), 0, f.partial[:0]
	if atStart {
		f.off = tailOffset(h, fi.Size(), fl.cfg.Tail)
	}
	fl.converter(f)
	return nil
}

func (fl *follower) converter(f *file) {
	f.conv = nil
	if fl.cfg.Convert != nil {
		f.conv = fl.cfg.Convert(f.path, f.f)
	}
}

// tailOffset returns where the last n lines of a file of size bytes start.
func tailOffset(h *os.File, size int64, n int) int64 {
	if n <= 0 || size == 0 {
		return size
	}
	end := size
	// A final newline ends the last line; it does not start one.
	var last [1]byte
	if _, err := h.ReadAt(last[:], size-1); err == nil && last[0] == '\n' {
		end--
	}
	buf := make([]byte, 64<<10)
	for pos := end; pos > 0; {
		step := min(int64(len(buf)), pos)
		pos -= step
		if _, err := h.ReadAt(buf[:step], pos); err != nil {
			return size
		}
		for i := step - 1; i >= 0; i-- {
			if buf[i] == '\n' {
				if n--; n == 0 {
					return pos + i + 1
				}
			}
		}
	}
	return 0
}

func (fl *follower) closeAll() {
	for _, f := range fl.files {
		if f.f != nil {
			f.f.Close()
		}
	}
}

// pollAll reads what each file gained and handles rotation.
func (fl *follower) pollAll() error {
	for _, p := range fl.order {
		f := fl.files[p]
		if f.f == nil {
			if _, err := os.Stat(p); err == nil {
				if err := fl.open(f, false); err != nil {
					continue
				}
			} else {
				continue
			}
		}
		if err := fl.drain(f); err != nil {
			return err
		}
		fi, err := os.Stat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			// Renamed away and not yet replaced: keep reading the old file.
		case err != nil:
		case idOf(fi) != f.id:
			// Rotated: the old file is read to its end above; a line it
			// did not end is a line. Then the new file from its start.
			if err := fl.drain(f); err != nil {
				return err
			}
			if err := fl.flushPartial(f); err != nil {
				return err
			}
			f.f.Close()
			f.f = nil
			if err := fl.open(f, false); err == nil {
				if err := fl.drain(f); err != nil {
					return err
				}
			}
		case fi.Size() < f.off:
			// Truncated in place (copytruncate): read it again from 0.
			if err := fl.flushPartial(f); err != nil {
				return err
			}
			f.off = 0
			fl.converter(f)
			if err := fl.drain(f); err != nil {
				return err
			}
		}
	}
	return nil
}

// drain reads f from its offset to its end and writes the complete lines.
func (fl *follower) drain(f *file) error {
	for {
		n, err := f.f.ReadAt(fl.buf, f.off)
		if n > 0 {
			f.off += int64(n)
			data := fl.buf[:n]
			last := bytes.LastIndexByte(data, '\n')
			if last < 0 {
				f.partial = append(f.partial, data...)
			} else {
				if f.conv != nil {
					start := f.off - int64(n) - int64(len(f.partial))
					fl.out = fl.convert(f, fl.out[:0], start, f.partial, data[:last+1])
				} else {
					fl.out = append(append(fl.out[:0], f.partial...), data[:last+1]...)
				}
				f.partial = append(f.partial[:0], data[last+1:]...)
				if _, err := fl.w.Write(fl.out); err != nil {
					return err
				}
			}
		}
		if err != nil || n < len(fl.buf) {
			return nil // EOF or an error: try again at the next poll
		}
	}
}

// convert appends to dst the lines of head+data (complete lines, the first
// starting at byte start of f), each through f's converter.
func (fl *follower) convert(f *file, dst []byte, start int64, head, data []byte) []byte {
	if len(head) > 0 {
		i := bytes.IndexByte(data, '\n')
		fl.line = append(append(fl.line[:0], head...), data[:i]...)
		dst, _ = f.conv(dst, fl.line, start)
		start += int64(len(fl.line)) + 1
		data = data[i+1:]
	}
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		dst, _ = f.conv(dst, data[:i], start)
		start += int64(i) + 1
		data = data[i+1:]
	}
	return dst
}

// flushPartial writes f's unfinished line as a line of its own.
func (fl *follower) flushPartial(f *file) error {
	if len(f.partial) == 0 {
		return nil
	}
	if f.conv != nil {
		// The partial line is what was read last, up to f.off.
		fl.out, _ = f.conv(fl.out[:0], f.partial, f.off-int64(len(f.partial)))
	} else {
		fl.out = append(append(fl.out[:0], f.partial...), '\n')
	}
	f.partial = f.partial[:0]
	_, err := fl.w.Write(fl.out)
	return err
}
