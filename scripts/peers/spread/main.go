// Command spread rewrites the timestamps of a `spate gen` NDJSON file so that
// its lines cover a given span evenly, keeping every byte of every line but
// the 24-character "ts" value at its start. `spate gen` steps 10 ms a line
// (1 GiB is ~8 h); scripts/peers/serve_query.sh uses this to make 24 h of
// logs of any size, for _time filters that select one hour of a day.
//
//	go run ./scripts/peers/spread -start 2026-01-02T00:00:00Z -span 24h IN OUT
//
// Line i of n gets start + i*span/n (millisecond precision), so timestamps
// never decrease. A line that does not begin with {"ts":" is an error.
package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"
)

const prefix = `{"ts":"`

// tsLayout is the format `spate gen` writes: always 24 bytes.
const tsLayout = "2006-01-02T15:04:05.000Z"

func main() {
	start := flag.String("start", "2026-01-02T00:00:00Z", "time of the first line, RFC 3339")
	span := flag.Duration("span", 24*time.Hour, "time from the first line to just after the last")
	flag.Parse()
	if flag.NArg() != 2 {
		fmt.Fprintln(os.Stderr, "usage: spread [-start T] [-span D] IN OUT")
		os.Exit(2)
	}
	t0, err := time.Parse(time.RFC3339, *start)
	if err == nil {
		err = run(flag.Arg(0), flag.Arg(1), t0, *span)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "spread:", err)
		os.Exit(1)
	}
}

func run(in, out string, t0 time.Time, span time.Duration) error {
	n, err := countLines(in)
	if err != nil {
		return err
	}
	if n == 0 {
		return errors.New("no lines in " + in)
	}
	f, err := os.Open(in)
	if err != nil {
		return err
	}
	defer f.Close()
	o, err := os.Create(out)
	if err != nil {
		return err
	}
	r := bufio.NewReaderSize(f, 1<<20)
	w := bufio.NewWriterSize(o, 1<<20)
	stepNs := float64(span) / float64(n)
	var ts []byte
	for i := int64(0); ; i++ {
		line, err := r.ReadSlice('\n')
		if err == io.EOF && len(line) == 0 {
			break
		}
		if err != nil && err != io.EOF {
			return fmt.Errorf("cannot read line %d of %s: %w", i+1, in, err)
		}
		if !bytes.HasPrefix(line, []byte(prefix)) || len(line) < len(prefix)+len(tsLayout) {
			return fmt.Errorf("line %d of %s does not start with %s and a timestamp", i+1, in, prefix)
		}
		t := t0.Add(time.Duration(float64(i) * stepNs)).UTC()
		ts = t.AppendFormat(ts[:0], tsLayout)
		copy(line[len(prefix):], ts)
		if _, err := w.Write(line); err != nil {
			return err
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return o.Close()
}

func countLines(path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	buf := make([]byte, 1<<20)
	var n int64
	for {
		k, err := f.Read(buf)
		n += int64(bytes.Count(buf[:k], []byte{'\n'}))
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return 0, err
		}
	}
}
