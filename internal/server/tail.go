package server

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/spate-io/spate/internal/fileread"
	"github.com/spate-io/spate/internal/query"
	"github.com/spate-io/spate/internal/segment"
)

// Live tailing, /select/logsql/tail. VictoriaLogs re-runs the query over a
// sliding time window (shifted back by its offset arg, 5s by default, for
// the data it buffers). spate knows exactly which bytes each segment had
// acknowledged at its last look, so after the first answer it reads only
// what was acknowledged since, each line once, whatever its _time: a line
// is sent within refresh_interval (default 1s) of its acknowledgement.
//
// The offset arg (default 0 here, 5s in VictoriaLogs) holds back the lines
// whose _time is within offset of now until they are that old. Rows whose
// pipes dropped _time are sent as they come (VictoriaLogs refuses them).
//
// Memory is bounded: each refresh reads at most tailMaxRead new bytes (the
// rest waits for the next), lines held back by offset take at most
// tailMaxHeld bytes (past it the oldest are sent early), and a client that
// does not read its answer for tailWriteTimeout is disconnected.

const (
	tailMaxRead = 16 << 20
	tailMaxHeld = 64 << 20
)

// tailWriteTimeoutVar is how long a tail waits for its client to take an
// answer before it gives up on it (a variable for tests).
var tailWriteTimeoutVar = 30 * time.Second

// tailPos is how much of each segment (by sequence number) a tail has
// read: the decompressed bytes of its lines.
type tailPos map[uint64]int64

// handleTail is /select/logsql/tail. It runs until the client goes away or
// the server shuts down; the timeout arg does not apply.
func (s *Server) handleTail(w http.ResponseWriter, r *http.Request) {
	setCORS(w)
	if len(s.cfg.SelectPeers) > 0 {
		http.Error(w, "live tailing is not supported across --select-peers: tail a storage node itself", http.StatusNotImplemented)
		return
	}
	if err := r.ParseForm(); err != nil {
		http.Error(w, fmt.Sprintf("cannot parse request args: %s", err), http.StatusBadRequest)
		return
	}
	a, err := s.parseSelectArgs(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if !a.q.CanLiveTail() {
		http.Error(w, fmt.Sprintf("the query [%s] cannot be used in live tailing; it may hold only pipes that work line by line (no stats, sort, limit, uniq, top, union and the like)", a.q), http.StatusBadRequest)
		return
	}
	// A join's subquery and those of in(...) run once, now, over the
	// request's time range if it has one; the tail then joins and
	// filters every new line with their results.
	if err := s.resolveSubqueries(r.Context(), a, a.q); err != nil {
		code := http.StatusBadRequest
		var he *httpError
		if errors.As(err, &he) {
			code = he.code
		}
		http.Error(w, err.Error(), code)
		return
	}
	refresh, err := durationArg(r, "refresh_interval", "1s")
	if err == nil && refresh <= 0 {
		err = errors.New("'refresh_interval' must be bigger than zero")
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	startOffset, err := durationArg(r, "start_offset", "5s")
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	offset, err := durationArg(r, "offset", "0s")
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.WriteHeader(http.StatusOK)
	if err := rc.Flush(); err != nil {
		return
	}
	ctx := r.Context()
	sortFields := !a.q.FixedFieldsOrder()
	bw := bufio.NewWriterSize(w, 64<<10)
	var rows []tailRow
	held := 0 // bytes of rows
	send := func() error {
		if len(rows) == 0 {
			return nil
		}
		slices.SortStableFunc(rows, func(x, y tailRow) int { return cmp.Compare(x.ts, y.ts) })
		n := len(rows)
		if offset > 0 {
			cut := s.cfg.Now().UnixNano() - offset
			n = 0
			for n < len(rows) && (rows[n].ts <= cut || held > tailMaxHeld) {
				held -= len(rows[n].line)
				n++
			}
		}
		if n == 0 {
			return nil
		}
		rc.SetWriteDeadline(time.Now().Add(tailWriteTimeoutVar))
		for _, row := range rows[:n] {
			if _, err := bw.Write(row.line); err != nil {
				return err
			}
		}
		rows = slices.Delete(rows, 0, n)
		if offset <= 0 {
			held = 0
		}
		if err := bw.Flush(); err != nil {
			return err
		}
		return rc.Flush()
	}
	collect := func(row *query.Row) error {
		fields := slices.Clone(row.Fields)
		if sortFields {
			slices.SortFunc(fields, func(x, y query.Field) int { return strings.Compare(x.Name, y.Name) })
		}
		line := appendJSONRow(nil, fields)
		if len(line) > 0 {
			rows = append(rows, tailRow{ts: row.Time, line: line})
			held += len(line)
		}
		return nil
	}

	// The first answer: the lines of the last start_offset, from a
	// snapshot whose sizes are where the tail then goes on. Its range has
	// no end: the snapshot is taken after now is read, and a line stored
	// in between (or stamped ahead of this clock) is in it, so a range
	// ending at now would drop it for good (the tail goes on past it).
	now := s.cfg.Now().UnixNano()
	first := *a
	first.q = cloneQuery(a.q)
	first.q.AddTimeFilter(now-startOffset, math.MaxInt64)
	pos := tailPos{}
	if err := s.tailFirst(ctx, &first, pos, collect); err != nil {
		if ctx.Err() == nil {
			fmt.Fprintf(bw, "\n%s\n", err)
			bw.Flush()
		}
		return
	}
	if send() != nil {
		s.m.tailDropped.Inc()
		return
	}
	tick := time.NewTicker(time.Duration(refresh))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.done:
			return
		case <-tick.C:
		}
		if err := s.tailNext(ctx, a, pos, collect); err != nil {
			if ctx.Err() == nil {
				fmt.Fprintf(bw, "\n%s\n", err)
				bw.Flush()
			}
			return
		}
		if send() != nil {
			s.m.tailDropped.Inc()
			return
		}
	}
}

type tailRow struct {
	ts   int64
	line []byte
}

func cloneQuery(q *query.Query) *query.Query {
	c := *q
	c.Pipes = slices.Clone(q.Pipes)
	return &c
}

// tailFirst runs the first tail query over a snapshot and records in pos
// how much of each segment that snapshot holds: the next lines the tail
// reads are exactly those after it.
func (s *Server) tailFirst(ctx context.Context, a *selectArgs, pos tailPos, sink sinkFunc) error {
	snap, err := segment.OpenSnapshot(s.cfg.DataDir, a.tenant)
	if err != nil {
		return err
	}
	for i := range snap.Files {
		f := &snap.Files[i]
		if f.Limit >= 0 {
			pos[f.Seq] = f.Limit
			continue
		}
		// A .zst without metadata: its size is what it decompresses to.
		n, err := readSegment(snap, f, 0, -1, io.Discard)
		if err != nil {
			snap.Close()
			return err
		}
		pos[f.Seq] = n
	}
	_, err = s.runSnapshot(ctx, a, a.q, snap, sink)
	return err
}

// tailNext reads the lines acknowledged since pos (at most tailMaxRead
// bytes), runs the query over them and moves pos past them.
func (s *Server) tailNext(ctx context.Context, a *selectArgs, pos tailPos, sink sinkFunc) error {
	snap, err := segment.OpenSnapshot(s.cfg.DataDir, a.tenant)
	if err != nil {
		return err
	}
	defer snap.Close()
	var buf bytes.Buffer
	for i := range snap.Files {
		f := &snap.Files[i]
		from := pos[f.Seq]
		if f.Limit >= 0 && f.Limit <= from {
			continue
		}
		room := int64(tailMaxRead - buf.Len())
		if room <= 0 {
			break
		}
		end := f.Limit
		if end < 0 || end-from > room {
			end = -1
		}
		n, err := readSegment(snap, f, from, end, &lineCap{w: &buf, room: room})
		if err != nil {
			return err
		}
		pos[f.Seq] = from + n
	}
	if buf.Len() == 0 {
		return nil
	}
	cfg := fileread.Config{Stdin: bytes.NewReader(buf.Bytes()), Workers: 1}
	opts := query.Options{AccountID: a.tenant.AccountID, ProjectID: a.tenant.ProjectID, StoreFields: true}
	_, err = query.Run(ctx, a.q, []string{"-"}, cfg, opts, sink)
	return err
}

// readSegment copies the lines of f from byte from (decompressed) to byte
// end, or to the end of the file when end < 0, into w, and returns the
// bytes copied. A lineCap w may stop it early at a line end.
func readSegment(snap *segment.Snapshot, f *segment.SnapshotFile, from, end int64, w io.Writer) (int64, error) {
	fh, err := snap.Open(f)
	if err != nil {
		return 0, err
	}
	defer fh.Close()
	var src io.Reader = fh
	var magic [4]byte
	if n, _ := fh.ReadAt(magic[:], 0); n == 4 && magic == [4]byte{0x28, 0xb5, 0x2f, 0xfd} {
		d, err := zstd.NewReader(fh, zstd.WithDecoderConcurrency(1))
		if err != nil {
			return 0, err
		}
		defer d.Close()
		if _, err := io.CopyN(io.Discard, d, from); err != nil {
			return 0, fmt.Errorf("cannot read %s: %w", f.Path, err)
		}
		src = d
	} else if _, err := fh.Seek(from, io.SeekStart); err != nil {
		return 0, err
	}
	if end >= 0 {
		src = io.LimitReader(src, end-from)
	}
	n, err := io.Copy(w, src)
	if errors.Is(err, errLineCap) {
		err = nil
	}
	if lc, ok := w.(*lineCap); ok {
		n = lc.done
	}
	if err != nil {
		return n, fmt.Errorf("cannot read %s: %w", f.Path, err)
	}
	return n, nil
}

var errLineCap = errors.New("read cap reached")

// lineCap writes whole lines to w until room bytes are used, then fails
// with errLineCap; done counts the bytes of whole lines written.
type lineCap struct {
	w       *bytes.Buffer
	room    int64
	done    int64
	partial []byte
}

func (c *lineCap) Write(p []byte) (int, error) {
	c.partial = append(c.partial, p...)
	i := bytes.LastIndexByte(c.partial, '\n')
	if i < 0 {
		if int64(len(c.partial)) > c.room {
			return 0, errLineCap
		}
		return len(p), nil
	}
	whole := c.partial[:i+1]
	if int64(len(whole)) > c.room {
		// Take the lines that fit; a first line longer than the room is
		// taken whole, so that the tail always moves on.
		j := bytes.LastIndexByte(whole[:c.room], '\n')
		if j < 0 && c.done == 0 {
			j = bytes.IndexByte(whole, '\n')
		}
		if j >= 0 {
			c.w.Write(whole[:j+1])
			c.done += int64(j + 1)
		}
		return 0, errLineCap
	}
	c.w.Write(whole)
	c.done += int64(len(whole))
	c.room -= int64(len(whole))
	c.partial = append(c.partial[:0], c.partial[i+1:]...)
	return len(p), nil
}
