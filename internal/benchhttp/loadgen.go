package benchhttp

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spate-io/spate/internal/latency"
)

// Load is one closed-loop run: Conns keep-alive connections, each with one
// GET in flight at a time, cycling through Paths.
type Load struct {
	Addr  string   // host:port
	Paths []string // request targets; connection i starts at path i*len(Paths)/Conns
	// Sizes holds the body size each path must answer with, parallel to
	// Paths; a response of any other length fails the run.
	Sizes    []int64
	Conns    int
	Warmup   time.Duration // requests before the window are not counted
	Duration time.Duration // the measured window
	// Window, if set, is called just before the measured window opens
	// (true) and just after it closes (false): the caller samples the
	// server's counters there.
	Window func(open bool)
}

// LoadResult is what the measured window saw.
type LoadResult struct {
	Requests uint64        // responses completed inside the window
	Bytes    int64         // body bytes received inside the window, partial responses included
	Elapsed  time.Duration // the window's length
	Hist     latency.Histogram
	Dials    int // connections opened, the first ones included
}

// phases of a run, in order.
const (
	phaseWarmup int32 = iota
	phaseMeasure
	phaseStop
)

// connStats is one connection's counters, read by the coordinator while
// the connection runs; padded so connections do not share cache lines.
type connStats struct {
	bytes    atomic.Int64
	requests atomic.Uint64
	_        [48]byte
}

// errStopped ends a connection's loop when the run is over.
var errStopped = errors.New("stopped")

// RunLoad drives l against its server and returns what the measured window
// saw. Every response must be 200 with the expected length; the first that
// is not, or a connection error, fails the run. Connections still reading
// a body when the window ends are cut, so long downloads do not stretch
// the run; the bytes they received inside the window are counted.
func RunLoad(ctx context.Context, l Load) (*LoadResult, error) {
	if l.Conns < 1 || len(l.Paths) == 0 || len(l.Sizes) != len(l.Paths) {
		return nil, errors.New("BUG: benchhttp.Load needs connections and paths with sizes")
	}
	reqs := make([][]byte, len(l.Paths))
	for i, p := range l.Paths {
		reqs[i] = []byte("GET " + p + " HTTP/1.1\r\nHost: " + l.Addr + "\r\nUser-Agent: spate-bench\r\n\r\n")
	}
	var (
		phase atomic.Int32
		stats = make([]connStats, l.Conns)
		hists = make([]latency.Histogram, l.Conns)
		dials atomic.Int64
		mu    sync.Mutex
		conns = make([]net.Conn, l.Conns)
		first error
		wg    sync.WaitGroup
	)
	fail := make(chan struct{})
	var failOnce sync.Once
	setErr := func(err error) {
		failOnce.Do(func() { first = err; close(fail) })
	}
	for c := range l.Conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cl := &client{addr: l.Addr, st: &stats[c], dials: &dials}
			defer cl.close()
			next := c * len(l.Paths) / l.Conns
			for phase.Load() != phaseStop {
				if cl.conn == nil {
					if err := cl.dial(); err != nil {
						setErr(err)
						return
					}
					mu.Lock()
					conns[c] = cl.conn
					stopped := phase.Load() == phaseStop
					mu.Unlock()
					if stopped {
						return
					}
				}
				start := time.Now()
				err := cl.get(reqs[next], l.Sizes[next])
				if err != nil {
					if phase.Load() == phaseStop {
						return
					}
					setErr(fmt.Errorf("GET %s: %w", l.Paths[next], err))
					return
				}
				if phase.Load() == phaseMeasure {
					hists[c].Record(time.Since(start))
					stats[c].requests.Add(1)
				}
				next = (next + 1) % len(l.Paths)
			}
		}()
	}
	sum := func() (b int64, n uint64) {
		for i := range stats {
			b += stats[i].bytes.Load()
			n += stats[i].requests.Load()
		}
		return
	}
	wait := func(d time.Duration) bool {
		select {
		case <-time.After(d):
			return true
		case <-fail:
		case <-ctx.Done():
			setErr(ctx.Err())
		}
		return false
	}
	res := &LoadResult{}
	ok := wait(l.Warmup)
	if ok {
		if l.Window != nil {
			l.Window(true)
		}
		b0, _ := sum()
		phase.Store(phaseMeasure)
		t0 := time.Now()
		ok = wait(l.Duration)
		// Close the window first: responses completing from here on are
		// not counted, and the snapshot below matches Elapsed.
		mu.Lock()
		phase.Store(phaseStop)
		mu.Unlock()
		res.Elapsed = time.Since(t0)
		b1, n1 := sum()
		res.Bytes, res.Requests = b1-b0, n1
		if l.Window != nil {
			l.Window(false)
		}
	}
	mu.Lock()
	phase.Store(phaseStop)
	for _, c := range conns {
		if c != nil {
			c.SetDeadline(time.Now()) // cut reads in progress
		}
	}
	mu.Unlock()
	wg.Wait()
	if !ok {
		return nil, first
	}
	for i := range hists {
		res.Hist.Merge(&hists[i])
	}
	res.Dials = int(dials.Load())
	return res, nil
}

// client is one keep-alive connection speaking just enough HTTP/1.1 to
// read responses with Content-Length or chunked bodies.
type client struct {
	addr  string
	conn  net.Conn
	br    *bufio.Reader
	st    *connStats
	dials *atomic.Int64
}

func (c *client) dial() error {
	conn, err := net.Dial("tcp", c.addr)
	if err != nil {
		return err
	}
	c.dials.Add(1)
	c.conn = conn
	if c.br == nil {
		c.br = bufio.NewReaderSize(conn, 256<<10)
	} else {
		c.br.Reset(conn)
	}
	return nil
}

func (c *client) close() {
	if c.conn != nil {
		c.conn.Close()
		c.conn = nil
	}
}

// get sends req and reads the whole response, which must be a 200 whose
// body is want bytes long. A response that asks to close the connection
// closes it; the next get dials again.
func (c *client) get(req []byte, want int64) error {
	if _, err := c.conn.Write(req); err != nil {
		return err
	}
	line, err := c.br.ReadSlice('\n')
	if err != nil {
		return fmt.Errorf("reading the status line: %w", err)
	}
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) {
		return fmt.Errorf("not an HTTP response: %q", line)
	}
	if code := string(line[9:12]); code != "200" {
		return fmt.Errorf("status %s", bytes.TrimSpace(line[9:]))
	}
	length, chunked, closing := int64(-1), false, false
	for {
		h, err := c.br.ReadSlice('\n')
		if err != nil {
			return fmt.Errorf("reading headers: %w", err)
		}
		h = bytes.TrimRight(h, "\r\n")
		if len(h) == 0 {
			break
		}
		name, value, _ := bytes.Cut(h, []byte(":"))
		value = bytes.TrimSpace(value)
		switch {
		case bytes.EqualFold(name, []byte("Content-Length")):
			if length, err = strconv.ParseInt(string(value), 10, 64); err != nil {
				return fmt.Errorf("bad Content-Length %q", value)
			}
		case bytes.EqualFold(name, []byte("Transfer-Encoding")):
			chunked = bytes.EqualFold(value, []byte("chunked"))
		case bytes.EqualFold(name, []byte("Connection")):
			closing = bytes.EqualFold(value, []byte("close"))
		}
	}
	var got int64
	switch {
	case chunked:
		got, err = c.chunks()
	case length >= 0:
		got, err = c.discard(length)
	default:
		return errors.New("response has neither Content-Length nor chunked encoding")
	}
	if err != nil {
		return fmt.Errorf("reading the body: %w", err)
	}
	if want >= 0 && got != want {
		return fmt.Errorf("body of %d bytes, want %d", got, want)
	}
	if closing {
		c.close()
	}
	return nil
}

// discard reads n body bytes, counting them as they arrive.
func (c *client) discard(n int64) (int64, error) {
	var done int64
	for done < n {
		step := int(min(n-done, int64(c.br.Size())))
		k, err := c.br.Discard(step)
		done += int64(k)
		c.st.bytes.Add(int64(k))
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return done, err
		}
	}
	return done, nil
}

// chunks reads a chunked body and its trailers.
func (c *client) chunks() (int64, error) {
	var total int64
	for {
		line, err := c.br.ReadSlice('\n')
		if err != nil {
			return total, err
		}
		hex, _, _ := bytes.Cut(bytes.TrimRight(line, "\r\n"), []byte(";"))
		n, err := strconv.ParseInt(string(bytes.TrimSpace(hex)), 16, 64)
		if err != nil || n < 0 {
			return total, fmt.Errorf("bad chunk size %q", line)
		}
		if n == 0 {
			for { // trailers, then the empty line
				t, err := c.br.ReadSlice('\n')
				if err != nil {
					return total, err
				}
				if len(bytes.TrimRight(t, "\r\n")) == 0 {
					return total, nil
				}
			}
		}
		k, err := c.discard(n)
		total += k
		if err != nil {
			return total, err
		}
		if crlf, err := c.br.ReadSlice('\n'); err != nil || len(bytes.TrimRight(crlf, "\r\n")) != 0 {
			return total, fmt.Errorf("chunk not followed by CRLF")
		}
	}
}
