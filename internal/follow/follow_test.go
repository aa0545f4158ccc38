package follow

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// collector reads the follower's lines and counts them per number.
type collector struct {
	mu    sync.Mutex
	seen  map[int]int
	total int
	bad   []string
}

func (c *collector) read(r io.Reader) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		n, err := strconv.Atoi(strings.TrimPrefix(line, "line "))
		c.mu.Lock()
		if err != nil || !strings.HasPrefix(line, "line ") {
			c.bad = append(c.bad, line)
		} else {
			c.seen[n]++
			c.total++
		}
		c.mu.Unlock()
	}
}

func (c *collector) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.total
}

// waitFor waits until the collector holds n lines.
func (c *collector) waitFor(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for c.count() < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d lines after 10 s, want %d", c.count(), n)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// TestRotation: a writer appends numbered lines, each in two writes, while
// its file is rotated 100 times, by rename and create or by copytruncate;
// every line is read exactly once, whole.
func TestRotation(t *testing.T) {
	for _, mode := range []string{"rename", "copytruncate"} {
		t.Run(mode, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "app.log")
			os.WriteFile(path, []byte("line 0\n"), 0o644) // present at start: skipped (Tail 0)
			pr, pw := io.Pipe()
			c := &collector{seen: map[int]int{}}
			done := make(chan struct{})
			go func() { c.read(pr); close(done) }()
			ctx, cancel := context.WithCancel(context.Background())
			ran := make(chan error, 1)
			go func() {
				ran <- Run(ctx, Config{Paths: func() ([]string, error) { return []string{path}, nil }, Poll: 5 * time.Millisecond, Rescan: 20 * time.Millisecond}, pw)
				pw.Close()
			}()
			time.Sleep(20 * time.Millisecond) // the follower has opened the file
			n := 0
			write := func(k int) {
				f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
				if err != nil {
					t.Fatal(err)
				}
				for range k {
					n++
					// Half a line now, the rest later: partial lines are held.
					fmt.Fprintf(f, "line %d", n)
					f.Sync()
					fmt.Fprintf(f, "\n")
				}
				f.Close()
			}
			for rot := 1; rot <= 100; rot++ {
				write(7)
				old := fmt.Sprintf("%s.%d", path, rot)
				switch mode {
				case "rename":
					if err := os.Rename(path, old); err != nil {
						t.Fatal(err)
					}
					// The writer goes on at once, into a new file; rotations
					// come slower than polls, as in life (tail -F loses a
					// file renamed away before it was ever seen).
					write(3)
					c.waitFor(t, n)
				case "copytruncate":
					c.waitFor(t, n) // copytruncate loses lines a reader has not read: none here
					data, _ := os.ReadFile(path)
					os.WriteFile(old, data, 0o644)
					if err := os.Truncate(path, 0); err != nil {
						t.Fatal(err)
					}
					time.Sleep(15 * time.Millisecond) // the follower sees the file shrink
				}
			}
			write(3)
			c.waitFor(t, n)
			cancel()
			if err := <-ran; err != nil {
				t.Fatal(err)
			}
			<-done
			if len(c.bad) > 0 {
				t.Fatalf("broken lines: %q", c.bad[:min(5, len(c.bad))])
			}
			for i := 1; i <= n; i++ {
				if c.seen[i] != 1 {
					t.Fatalf("line %d read %d times", i, c.seen[i])
				}
			}
			if c.seen[0] != 0 || c.total != n {
				t.Fatalf("%d lines read, want %d (line 0: %d)", c.total, n, c.seen[0])
			}
		})
	}
}

// TestTailAndNewFiles: --tail N starts with the last N lines of files
// present at the start; files that appear later are read from their start.
func TestTailAndNewFiles(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.log")
	os.WriteFile(a, []byte("line 1\nline 2\nline 3\n"), 0o644)
	pr, pw := io.Pipe()
	c := &collector{seen: map[int]int{}}
	done := make(chan struct{})
	go func() { c.read(pr); close(done) }()
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		Run(ctx, Config{Paths: func() ([]string, error) { return filepath.Glob(filepath.Join(dir, "*.log")) }, Tail: 2, Poll: 5 * time.Millisecond, Rescan: 10 * time.Millisecond}, pw)
		pw.Close()
	}()
	c.waitFor(t, 2)
	os.WriteFile(filepath.Join(dir, "b.log"), []byte("line 4\nline 5\n"), 0o644)
	c.waitFor(t, 4)
	cancel()
	<-done
	if c.seen[1] != 0 || c.seen[2] != 1 || c.seen[3] != 1 || c.seen[4] != 1 || c.seen[5] != 1 {
		t.Fatalf("seen %v", c.seen)
	}
}

func TestTailOffset(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	for _, c := range []struct {
		text string
		n    int
		want int64
	}{
		{"a\nb\nc\n", 2, 2}, {"a\nb\nc", 2, 2}, {"a\nb\nc\n", 5, 0}, {"a\nb\nc\n", 0, 6}, {"", 3, 0},
	} {
		os.WriteFile(p, []byte(c.text), 0o644)
		f, _ := os.Open(p)
		if got := tailOffset(f, int64(len(c.text)), c.n); got != c.want {
			t.Errorf("tailOffset(%q, %d) = %d, want %d", c.text, c.n, got, c.want)
		}
		f.Close()
	}
}

// TestConvert: each line reaches Convert's function whole, with the offset
// where it starts in its file, also when it was written in pieces, and the
// function is asked for again after a truncation.
func TestConvert(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a.log")
	if err := os.WriteFile(p, []byte("header\nfirst\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	opens := 0
	conv := func(path string, h *os.File) ConvertFunc {
		mu.Lock()
		opens++
		gen := opens
		mu.Unlock()
		return func(dst, line []byte, off int64) ([]byte, bool) {
			if off == 0 {
				return dst, false // a header
			}
			return fmt.Appendf(dst, "line %d\n", int64(gen)*1000+off), true
		}
	}
	pr, pw := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, Config{Paths: func() ([]string, error) { return []string{p}, nil }, Tail: 5, Poll: 5 * time.Millisecond, Convert: conv}, pw)
		pw.Close()
	}()
	c := &collector{seen: map[int]int{}}
	go c.read(pr)
	c.waitFor(t, 1) // "first" at 7
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("sec")
	time.Sleep(50 * time.Millisecond)
	f.WriteString("ond\nthird\n") // "second" at 13, "third" at 20
	f.Close()
	c.waitFor(t, 3)
	if err := os.WriteFile(p, []byte("h2\nx\n"), 0o644); err != nil { // truncated: "x" at 3
		t.Fatal(err)
	}
	c.waitFor(t, 4)
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{1007, 1013, 1020, 2003} {
		if c.seen[n] != 1 {
			t.Fatalf("line %d seen %d times; all: %v, bad %q", n, c.seen[n], c.seen, c.bad)
		}
	}
}
