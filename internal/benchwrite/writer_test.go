//go:build linux

package benchwrite

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// writeAndVerify writes recs with the writer to a new file and checks the
// file holds exactly recs.
func writeAndVerify(t *testing.T, name string, mode SyncMode, recs Records, batch int, opt writerOptions) runStats {
	t.Helper()
	f, err := os.Create(filepath.Join(t.TempDir(), "out.ndjson"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := writeRecords(context.Background(), f, name, mode, recs, batch, opt)
	if err != nil {
		t.Fatalf("%s fsync=%s: %v", name, mode, err)
	}
	if _, err := verify(f, recs); err != nil {
		t.Fatalf("%s fsync=%s: %v", name, mode, err)
	}
	return st
}

// smallOpts make the writev and mmap writers take their slow paths on a
// small volume: three iovecs per call, and two-page mappings that records
// straddle.
var smallOpts = writerOptions{iovMax: 3, mmapStep: int64(2 * os.Getpagesize())}

func TestWritersWriteEveryRecordOnce(t *testing.T) {
	const n, batch = 1001, 64 // the last batch is partial
	recs := testRecords(t, n, 37)
	batches := int64((n + batch - 1) / batch)
	for _, opt := range []writerOptions{{}, smallOpts} {
		for _, mode := range SyncModes {
			for _, name := range Writers {
				t.Run(fmt.Sprintf("%s/fsync=%s/iovmax=%d", name, mode, opt.iovMax), func(t *testing.T) {
					st := writeAndVerify(t, name, mode, recs, batch, opt)
					if len(st.Batches) != int(batches) {
						t.Errorf("%d batch latencies, want %d", len(st.Batches), batches)
					}
					sc := st.Syscalls
					wantSyncs := map[SyncMode]int64{SyncNone: 0, SyncBatch: batches, SyncEnd: 1}[mode]
					switch name {
					case WriteRow:
						if sc.Write != n {
							t.Errorf("%d writes, want one per record (%d)", sc.Write, n)
						}
					case Writev:
						// ceil(records per batch / iovecs per call) per batch.
						want := batches
						if opt.iovMax > 0 {
							want = 0
							for lo := 0; lo < n; lo += batch {
								want += int64((min(batch, n-lo) + opt.iovMax - 1) / opt.iovMax)
							}
						}
						if sc.Writev != want || sc.Write != 0 {
							t.Errorf("%v, want %d writevs", sc, want)
						}
					case Mmap:
						if sc.Write+sc.Writev != 0 {
							t.Errorf("mmap issued write calls: %v", sc)
						}
						if sc.Mmap != sc.Munmap || sc.Ftruncate < 1 {
							t.Errorf("mmap: unbalanced mappings or no final ftruncate: %v", sc)
						}
						// msync per batch (and per full mapping), one fdatasync
						// for the final size when syncing at all.
						if mode == SyncBatch && (sc.Msync < batches || sc.Fdatasync != 1) ||
							mode == SyncEnd && (sc.Msync != 0 || sc.Fdatasync != 1) ||
							mode == SyncNone && sc.Syncs() != 0 {
							t.Errorf("mmap fsync=%s: %v", mode, sc)
						}
						return
					}
					if sc.Fdatasync != wantSyncs || sc.Msync != 0 {
						t.Errorf("fsync=%s: %v, want %d fdatasync", mode, sc, wantSyncs)
					}
				})
			}
		}
	}
}

func TestWritersBufioFlushesFullBuffers(t *testing.T) {
	recs := testRecords(t, 10000, 100) // 1,000,000 bytes
	f := func(name string, want int64) {
		t.Helper()
		st := writeAndVerify(t, name, SyncNone, recs, 1000, writerOptions{})
		if st.Syscalls.Write != want || st.Syscalls.Total() != want {
			t.Errorf("%s: %v, want %d writes and nothing else", name, st.Syscalls, want)
		}
	}
	f(Bufio4K, (1_000_000+4095)/4096)
	f(Bufio64K, (1_000_000+65535)/65536)
	f(Bufio1M, 1)
	f(WriteRow, 10000)
}

func TestWritevRespectsIOVMax(t *testing.T) {
	var calls []int
	defer func(orig func(int, []unix.Iovec) (int, error)) { sysWritev = orig }(sysWritev)
	sysWritev = func(fd int, iov []unix.Iovec) (int, error) {
		calls = append(calls, len(iov))
		return rawWritev(fd, iov)
	}
	recs := testRecords(t, 100, 50)
	st := writeAndVerify(t, Writev, SyncNone, recs, 10, writerOptions{iovMax: 4})
	// Each batch of 10: 4 + 4 + 2.
	if len(calls) != 30 || st.Syscalls.Writev != 30 {
		t.Fatalf("%d writev calls (%d counted), want 30", len(calls), st.Syscalls.Writev)
	}
	for i, c := range calls {
		if want := []int{4, 4, 2}[i%3]; c != want {
			t.Fatalf("call %d took %d iovecs, want %d", i, c, want)
		}
	}
}

// shortWrites makes every write and writev transfer at most n bytes, as a
// kernel may (a signal, a full disk), until the returned func is called.
func shortWrites(n int) (restore func()) {
	origW, origV := sysWrite, sysWritev
	sysWrite = func(fd int, p []byte) (int, error) { return unix.Write(fd, p[:min(len(p), n)]) }
	sysWritev = func(fd int, iov []unix.Iovec) (int, error) {
		var trimmed []unix.Iovec
		left := n
		for _, v := range iov {
			if left == 0 {
				break
			}
			l := min(int(v.Len), left)
			v.SetLen(l)
			left -= l
			trimmed = append(trimmed, v)
		}
		return rawWritev(fd, trimmed)
	}
	return func() { sysWrite, sysWritev = origW, origV }
}

func TestWritersSurviveShortWrites(t *testing.T) {
	defer shortWrites(7)()
	recs := testRecords(t, 300, 41) // 41 is not a multiple of 7: writes stop mid-record
	for _, name := range []string{WriteRow, Bufio4K, Bufio64K, Writev} {
		for _, opt := range []writerOptions{{}, smallOpts} {
			st := writeAndVerify(t, name, SyncBatch, recs, 16, opt)
			if calls := st.Syscalls.Write + st.Syscalls.Writev; calls < int64(len(recs.Data)/7) {
				t.Errorf("%s: %d write calls for %d bytes at 7 bytes a call: short writes not counted", name, calls, len(recs.Data))
			}
		}
	}
}

// TestVerifyCatchesLostAndDuplicatedRecords checks that a writer that
// loses or repeats data fails, whatever the kernel claims.
func TestVerifyCatchesLostAndDuplicatedRecords(t *testing.T) {
	recs := testRecords(t, 200, 50)
	f := func(name string, want string, hook func()) {
		t.Helper()
		origW, origV := sysWrite, sysWritev
		defer func() { sysWrite, sysWritev = origW, origV }()
		hook()
		fl, err := os.Create(filepath.Join(t.TempDir(), "out.ndjson"))
		if err != nil {
			t.Fatal(err)
		}
		defer fl.Close()
		if _, err := writeRecords(context.Background(), fl, name, SyncNone, recs, 32, writerOptions{iovMax: 5}); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		_, err = verify(fl, recs)
		if !errors.Is(err, errLostData) || !strings.Contains(err.Error(), want) {
			t.Fatalf("%s: verify = %v, want errLostData containing %q", name, err, want)
		}
	}
	// writev claims the whole batch but the kernel only got the first record.
	f(Writev, "bytes, want 10000", func() {
		sysWritev = func(fd int, iov []unix.Iovec) (int, error) {
			_, err := rawWritev(fd, iov[:1])
			total := 0
			for _, v := range iov {
				total += int(v.Len)
			}
			return total, err
		}
	})
	// write sends record 7 twice: the file is a record too long.
	calls := 0
	f(WriteRow, "it is 10050 bytes, want 10000", func() {
		sysWrite = func(fd int, p []byte) (int, error) {
			if calls++; calls == 8 {
				unix.Write(fd, p)
			}
			return unix.Write(fd, p)
		}
	})
	// write sends record 7 twice and drops record 9: the size is right.
	calls = 0
	f(WriteRow, "in record 8", func() {
		sysWrite = func(fd int, p []byte) (int, error) {
			switch calls++; calls {
			case 8:
				unix.Write(fd, p)
			case 10:
				return len(p), nil
			}
			return unix.Write(fd, p)
		}
	})
	// A write that swaps two bytes keeps the size but not the content.
	f(Bufio4K, "first difference at offset", func() {
		sysWrite = func(fd int, p []byte) (int, error) {
			q := append([]byte(nil), p...)
			q[100], q[101] = q[101], q[100]
			return unix.Write(fd, q)
		}
	})
}

func TestWriteRecordsErrors(t *testing.T) {
	recs := testRecords(t, 10, 40)
	f := func(name string, batch int, want string) {
		t.Helper()
		fl, err := os.Create(filepath.Join(t.TempDir(), "out"))
		if err != nil {
			t.Fatal(err)
		}
		defer fl.Close()
		_, err = writeRecords(context.Background(), fl, name, SyncNone, recs, batch, writerOptions{})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("%s batch %d: err = %v, want it to contain %q", name, batch, err, want)
		}
	}
	f("fwrite", 10, `unknown writer "fwrite"`)
	f(WriteRow, 0, "batches of 0 records")
	// A read-only file fails on the first write.
	ro, err := os.Create(filepath.Join(t.TempDir(), "ro"))
	if err != nil {
		t.Fatal(err)
	}
	ro.Close()
	ro, _ = os.Open(ro.Name())
	defer ro.Close()
	if _, err := writeRecords(context.Background(), ro, WriteRow, SyncNone, recs, 10, writerOptions{}); err == nil || !strings.Contains(err.Error(), "cannot write record 0") {
		t.Fatalf("read-only file: err = %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := writeRecords(ctx, ro, WriteRow, SyncNone, recs, 10, writerOptions{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: err = %v", err)
	}
}

func TestMmapFallsBackToFtruncate(t *testing.T) {
	defer func(orig func(int, uint32, int64, int64) error) { sysFallocate = orig }(sysFallocate)
	sysFallocate = func(int, uint32, int64, int64) error { return unix.EOPNOTSUPP }
	recs := testRecords(t, 500, 60) // 30,000 bytes: four 8 KiB steps
	for _, mode := range SyncModes {
		st := writeAndVerify(t, Mmap, mode, recs, 50, smallOpts)
		if st.Grow != "ftruncate" || st.Syscalls.Fallocate != 1 || st.Syscalls.Ftruncate != 4+1 {
			t.Errorf("fsync=%s: grew with %s, %v; want one failed fallocate, then ftruncate per step and at the end", mode, st.Grow, st.Syscalls)
		}
	}
	// Any other fallocate error fails the run.
	sysFallocate = func(int, uint32, int64, int64) error { return unix.ENOSPC }
	fl, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer fl.Close()
	if _, err := writeRecords(context.Background(), fl, Mmap, SyncNone, recs, 50, smallOpts); !errors.Is(err, unix.ENOSPC) {
		t.Fatalf("fallocate ENOSPC: err = %v", err)
	}
}
