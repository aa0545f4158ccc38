package segment

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

func mustMark(t testing.TB, s *Store, marks []Mark, dayLines ...string) {
	t.Helper()
	p, err := s.EnqueueMarked(context.Background(), groups(dayLines...), marks, true)
	if err == nil {
		err = p.Wait(context.Background())
	}
	if err != nil {
		t.Fatalf("EnqueueMarked: %v", err)
	}
}

func TestCheckpointMarks(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir, Options{Checkpoint: true})
	if got := s.Marks(); len(got) != 0 || got == nil {
		t.Fatalf("new store: got marks %v, want an empty map", got)
	}
	mustMark(t, s, []Mark{{"t/0", 5}, {"t/1", 3}}, "2026-11-22", "a\nb\n")
	mustMark(t, s, []Mark{{"t/0", 7}}) // marks only
	mustAppend(t, s, "2026-11-23", "c\n")
	want := map[string]int64{"t/0": 7, "t/1": 3}
	if got := s.Marks(); !maps.Equal(got, want) {
		t.Fatalf("got marks %v, want %v", got, want)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// A checkpoint file keeps the store checkpointed without the option.
	s2 := openStore(t, dir, Options{})
	if got := s2.Marks(); !maps.Equal(got, want) {
		t.Fatalf("after reopen: got marks %v, want %v", got, want)
	}
	mustMark(t, s2, []Mark{{"t/1", 4}}, "2026-11-22", "d\n")
	s2.Close()
	days := readDays(t, dir)
	if days["2026-11-22"] != "a\nb\nd\n" || days["2026-11-23"] != "c\n" {
		t.Fatalf("got %q", days)
	}

	// Marks need checkpoints.
	plain := openStore(t, t.TempDir(), Options{})
	if _, err := plain.EnqueueMarked(context.Background(), nil, []Mark{{"k", 1}}, false); !errors.Is(err, ErrInvalid) {
		t.Fatalf("got %v, want ErrInvalid", err)
	}
	if plain.Marks() != nil {
		t.Fatal("a store without checkpoints has marks")
	}
}

// TestCheckpointCutsBack: lines written after the last checkpoint (a
// crash between a batch's fsync and its checkpoint) are removed at Open,
// whole segments or segment tails, and the marks are the checkpoint's.
func TestCheckpointCutsBack(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir, Options{Checkpoint: true, MaxSegmentBytes: 64, NoCompress: true})
	var acked strings.Builder
	for i := range 10 {
		line := fmt.Sprintf("acked line %d\n", i)
		mustMark(t, s, []Mark{{"p", int64(i + 1)}}, "2026-11-22", line)
		acked.WriteString(line)
	}
	ckpt, err := os.ReadFile(filepath.Join(dir, checkpointName))
	if err != nil {
		t.Fatal(err)
	}
	// Batch B: more lines in the active segment, a rotation into a new
	// one, and a new day.
	mustMark(t, s, []Mark{{"p", 100}}, "2026-11-22", strings.Repeat("lost line\n", 3), "2026-11-23", "lost day\n")
	crash := t.TempDir()
	if err := os.CopyFS(crash, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(crash, lockName))
	// B's checkpoint record never made it, and the next one was cut short.
	half := appendRecord(nil, &checkpointState{NextSeq: 99, Marks: map[string]int64{"p": 200}})
	torn := append(append([]byte(nil), ckpt...), half[:len(half)-3]...)
	if err := os.WriteFile(filepath.Join(crash, checkpointName), torn, 0o644); err != nil {
		t.Fatal(err)
	}

	logger, logs := testLogger()
	s2 := openStore(t, crash, Options{Logger: logger, NoCompress: true})
	if got := s2.Marks(); !maps.Equal(got, map[string]int64{"p": 10}) {
		t.Fatalf("got marks %v, want p=10", got)
	}
	mustMark(t, s2, []Mark{{"p", 11}}, "2026-11-22", "after restart\n")
	s2.Close()
	days := readDays(t, crash)
	if got, want := days["2026-11-22"], acked.String()+"after restart\n"; got != want {
		t.Fatalf("got\n%q\nwant\n%q", got, want)
	}
	if _, ok := days["2026-11-23"]; ok {
		t.Fatalf("the day written after the checkpoint survived: %q", days)
	}
	for _, w := range []string{"cut segment back to the last checkpoint", "removed segment written after the last checkpoint"} {
		if !strings.Contains(logs.String(), w) {
			t.Errorf("log lacks %q:\n%s", w, logs)
		}
	}
	// The original, which got B's checkpoint, keeps B.
	s.Close()
	if got := readDays(t, dir)["2026-11-23"]; got != "lost day\n" {
		t.Fatalf("original store: got %q", got)
	}
}

func TestCheckpointBadFile(t *testing.T) {
	for name, content := range map[string]string{
		"no header":   "garbage",
		"only header": checkpointMagic,
		"cut record":  checkpointMagic + "\x10\x00\x00\x00abcd{",
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			writeFiles(t, dir, checkpointName, content)
			_, err := Open(dir, Options{Logger: discardLogger()})
			if err == nil || !strings.Contains(err.Error(), checkpointName) {
				t.Fatalf("got %v, want an error naming %s", err, checkpointName)
			}
		})
	}
}

// TestCheckpointWriteError: a checkpoint that cannot be written fails its
// batch, which is rolled back with its marks, and every later one until
// the store is reopened (a later mark must not pass the lost lines).
func TestCheckpointWriteError(t *testing.T) {
	dir := t.TempDir()
	var failing atomic.Bool
	s := openStore(t, dir, Options{Checkpoint: true, NoCompress: true, testCheckpoint: func() error {
		if failing.Load() {
			return errors.New("injected checkpoint error")
		}
		return nil
	}})
	mustMark(t, s, []Mark{{"p", 1}}, "2026-11-22", "one\n")
	failing.Store(true)
	err := s.Append(context.Background(), groups("2026-11-22", "fails\n"))
	if err == nil || !strings.Contains(err.Error(), "injected checkpoint error") {
		t.Fatalf("got %v, want the injected error", err)
	}
	failing.Store(false)
	err = s.Append(context.Background(), groups("2026-11-22", "after the failure\n"))
	if err == nil || !strings.Contains(err.Error(), "must be reopened") {
		t.Fatalf("got %v, want the store to refuse until reopened", err)
	}
	if got := s.Marks(); got["p"] != 1 {
		t.Fatalf("got marks %v after a failed checkpoint", got)
	}
	s.Close()
	s2 := openStore(t, dir, Options{})
	if got := s2.Marks(); got["p"] != 1 {
		t.Fatalf("after reopen: got marks %v", got)
	}
	mustMark(t, s2, []Mark{{"p", 2}}, "2026-11-22", "two\n")
	s2.Close()
	if got := readDays(t, dir)["2026-11-22"]; got != "one\ntwo\n" {
		t.Fatalf("got %q", got)
	}
}

// TestCheckpointLogRewrite: a log past checkpointMaxBytes is rewritten
// as one record, and the marks survive.
func TestCheckpointLogRewrite(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir, Options{Checkpoint: true, NoCompress: true, Sync: SyncNever})
	big := strings.Repeat("k", 4000)
	for i := range 1200 { // about 1200 records of 4 KB
		mustMark(t, s, []Mark{{big, int64(i)}})
	}
	fi, err := os.Stat(filepath.Join(dir, checkpointName))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() > checkpointMaxBytes+8192 {
		t.Fatalf("checkpoint log is %d bytes, want it rewritten", fi.Size())
	}
	s.Close()
	s2 := openStore(t, dir, Options{})
	if got := s2.Marks()[big]; got != 1199 {
		t.Fatalf("got mark %d, want 1199", got)
	}
}

const killChildEnv = "SPATE_SEGMENT_KILL_CHILD"

// TestCheckpointKillChild is the process TestCheckpointKill kills: it
// appends lines "g<k> <i>" from four goroutines, each request marked
// "g<k>" = i+1, resuming from the store's marks, and prints "acked g<k>
// <i+1>" after each acknowledgement.
func TestCheckpointKillChild(t *testing.T) {
	dir := os.Getenv(killChildEnv)
	if dir == "" {
		t.Skip("run by TestCheckpointKill")
	}
	s, err := Open(dir, Options{Checkpoint: true, MaxSegmentBytes: 4096, CompressDelay: -1, Logger: discardLogger()})
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(2)
	}
	marks := s.Marks()
	var mu sync.Mutex
	out := bufio.NewWriter(os.Stdout)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			key := "g" + strconv.Itoa(g)
			for i := marks[key]; ; i++ {
				day := fmt.Sprintf("2026-11-%02d", 20+min(i/500, 9))
				line := fmt.Sprintf("%s %d\n", key, i)
				p, err := s.EnqueueMarked(context.Background(), groups(day, line), []Mark{{key, i + 1}}, true)
				if err == nil {
					err = p.Wait(context.Background())
				}
				if err != nil {
					fmt.Println("append:", err)
					os.Exit(2)
				}
				mu.Lock()
				fmt.Fprintf(out, "acked %s %d\n", key, i+1)
				out.Flush()
				mu.Unlock()
			}
		})
	}
	wg.Wait()
}

// TestCheckpointKill kills a process appending marked lines with SIGKILL
// at random moments, three times, restarting it each time from the
// store's marks: every line up to each mark is stored exactly once, none
// beyond it, and no acknowledged mark is lost.
func TestCheckpointKill(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	dir := t.TempDir()
	acked := map[string]int64{}
	for round := range 3 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCheckpointKillChild$")
		cmd.Env = append(os.Environ(), killChildEnv+"="+dir)
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := make(chan string)
		go func() {
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				lines <- sc.Text()
			}
			close(lines)
		}()
		deadline := time.After(time.Duration(150+100*round) * time.Millisecond)
		n := 0
	read:
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("round %d: child exited: %v", round, cmd.Wait())
				}
				var key string
				var v int64
				if _, err := fmt.Sscanf(l, "acked %s %d", &key, &v); err != nil {
					t.Fatalf("child said %q", l)
				}
				acked[key] = max(acked[key], v)
				n++
			case <-deadline:
				if n > 0 {
					break read
				}
				deadline = time.After(50 * time.Millisecond)
			}
		}
		cmd.Process.Signal(syscall.SIGKILL)
		for l := range lines {
			var key string
			var v int64
			if _, err := fmt.Sscanf(l, "acked %s %d", &key, &v); err == nil {
				acked[key] = max(acked[key], v)
			}
		}
		cmd.Wait()
		t.Logf("round %d: killed after %d acknowledgements", round, n)
	}
	s := openStore(t, dir, Options{NoCompress: true})
	marks := s.Marks()
	s.Close()
	seen := map[string]int64{}
	days := readDays(t, dir)
	for _, day := range slices.Sorted(maps.Keys(days)) {
		for _, l := range strings.Split(strings.TrimSuffix(days[day], "\n"), "\n") {
			key, num, _ := strings.Cut(l, " ")
			i, err := strconv.ParseInt(num, 10, 64)
			if err != nil {
				t.Fatalf("%s: bad line %q", day, l)
			}
			if i != seen[key] {
				// Lines of one key go to days in order, and days are read
				// in order: a line out of place is lost or duplicated.
				t.Fatalf("%s: line %q, want %s %d next", day, l, key, seen[key])
			}
			seen[key]++
		}
	}
	for key, v := range acked {
		if marks[key] < v {
			t.Errorf("%s: mark %d, but %d was acknowledged", key, marks[key], v)
		}
	}
	for key, m := range marks {
		if seen[key] != m {
			t.Errorf("%s: %d lines stored, mark says %d", key, seen[key], m)
		}
	}
	t.Logf("marks %v, acknowledged %v", marks, acked)
}
