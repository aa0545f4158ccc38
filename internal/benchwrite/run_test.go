package benchwrite

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

const childEnv = "SPATE_BENCHWRITE_TEST_CHILD"

// TestMain lets the test binary act as the measured child process: Run
// re-executes it with childEnv set and the spec as the last argument.
func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		var spec ChildSpec
		if err := json.Unmarshal([]byte(os.Args[len(os.Args)-1]), &spec); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		if err := RunChild(context.Background(), spec, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func testConfig(dir string) Config {
	return Config{
		Dir:          dir,
		Size:         64 << 10,
		Batch:        100,
		ChildCommand: []string{os.Args[0], "-test.run=^$"},
		ChildEnv:     []string{childEnv + "=1"},
	}
}

func TestChildSpecJSONRoundTrip(t *testing.T) {
	spec := ChildSpec{Path: "/tmp/x.ndjson", Writer: Bufio64K, Sync: SyncBatch, Records: 671088, RecordSize: 100, Batch: 1000}
	b, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"path":"/tmp/x.ndjson","writer":"bufio-64k","fsync":"batch","records":671088,"record_size":100,"batch":1000}`
	if string(b) != want {
		t.Fatalf("spec JSON\n got %s\nwant %s", b, want)
	}
	var back ChildSpec
	if err := json.Unmarshal(b, &back); err != nil || back != spec {
		t.Fatalf("round trip: %+v, %v; want %+v", back, err, spec)
	}
	res := ChildResult{Writer: Mmap, Sync: SyncEnd, Records: 3, Bytes: 300, WallNS: 5, Batches: 1,
		BatchMS: Pctl{P50: 1, P95: 2, P99: 3, Max: 4}, Syscalls: Syscalls{Fallocate: 1, Mmap: 1, Munmap: 1, Ftruncate: 1, Fdatasync: 1},
		Grow: "fallocate", PeakRSSMB: 9, BaseRSSMB: 8, Verified: true, SHA256: "ab"}
	b, _ = json.Marshal(res)
	var resBack ChildResult
	if err := json.Unmarshal(b, &resBack); err != nil || !reflect.DeepEqual(resBack, res) {
		t.Fatalf("result round trip: %+v, %v; want %+v", resBack, err, res)
	}
}

func TestRunChild(t *testing.T) {
	p := filepath.Join(t.TempDir(), "out.ndjson")
	var out bytes.Buffer
	spec := ChildSpec{Path: p, Writer: Writev, Sync: SyncEnd, Records: 1234, RecordSize: 64, Batch: 100}
	if err := RunChild(context.Background(), spec, &out); err != nil {
		t.Fatal(err)
	}
	var res ChildResult
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatalf("%v: %s", err, out.Bytes())
	}
	if !res.Verified || res.Records != 1234 || res.Bytes != 1234*64 || res.Batches != 13 || res.WallNS <= 0 ||
		res.Syscalls.Writev != 13 || res.Syscalls.Fdatasync != 1 || len(res.SHA256) != 64 || res.PeakRSSMB <= 0 {
		t.Fatalf("result %+v", res)
	}
	if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the child left its file behind: %v", err)
	}
}

func TestRunChildFailure(t *testing.T) {
	dir := t.TempDir()
	ok := ChildSpec{Path: filepath.Join(dir, "a"), Writer: WriteRow, Sync: SyncNone, Records: 10, RecordSize: 50, Batch: 5}
	f := func(mod func(*ChildSpec), want string) {
		t.Helper()
		spec := ok
		mod(&spec)
		err := RunChild(context.Background(), spec, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("%+v: err = %v, want it to contain %q", spec, err, want)
		}
	}
	f(func(s *ChildSpec) { s.Writer = "stdio" }, `unknown writer "stdio"`)
	f(func(s *ChildSpec) { s.Sync = "always" }, `unknown fsync mode "always"`)
	f(func(s *ChildSpec) { s.Path = "" }, "no path")
	f(func(s *ChildSpec) { s.Batch = 0 }, "both must be positive")
	f(func(s *ChildSpec) { s.RecordSize = 5 }, "need at least")
	f(func(s *ChildSpec) { s.Path = filepath.Join(dir, "missing", "a") }, "cannot create the output file")
	// An existing file is never overwritten (O_EXCL).
	os.WriteFile(filepath.Join(dir, "taken"), []byte("x"), 0o644)
	f(func(s *ChildSpec) { s.Path = filepath.Join(dir, "taken") }, "file exists")
}

func TestRun(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig(dir)
	cfg.Writers = []string{Bufio4K, Mmap} // write is added as the reference
	cfg.Syncs = []SyncMode{SyncEnd, SyncNone}
	cfg.Repeat = 2
	var progress bytes.Buffer
	cfg.Progress = &progress
	rep, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rep.Rows {
		got = append(got, r.Label())
		if r.Runs != 2 || len(r.RecordsPerSecRuns) != 2 || r.RecordsPerSec <= 0 || r.VsWrite <= 0 || r.SyscallsTotal != r.Syscalls.Total() {
			t.Errorf("%s: %+v", r.Label(), r)
		}
		if r.Writer == WriteRow && r.VsWrite != 1 {
			t.Errorf("%s: vs write %v, want 1", r.Label(), r.VsWrite)
		}
	}
	want := []string{"write fsync=none", "bufio-4k fsync=none", "mmap fsync=none", "write fsync=end", "bufio-4k fsync=end", "mmap fsync=end"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("rows %q, want %q (SyncModes, then Writers order)", got, want)
	}
	if rep.Records != 655 || rep.Bytes != 65500 || rep.RecordSize != 100 || rep.FSType == "" {
		t.Fatalf("report %+v", rep)
	}
	if !strings.Contains(progress.String(), "[12/12] round 2/2") {
		t.Fatalf("progress: %q", progress.String())
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Fatalf("files left in the output directory: %v", left)
	}
}

func TestRunErrors(t *testing.T) {
	dir := t.TempDir()
	f := func(mod func(*Config), want string) {
		t.Helper()
		cfg := testConfig(dir)
		mod(&cfg)
		_, err := Run(context.Background(), cfg)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("err = %v, want it to contain %q", err, want)
		}
	}
	f(func(c *Config) { c.Writers = []string{"fwrite"} }, `unknown writer "fwrite"`)
	f(func(c *Config) { c.Syncs = []SyncMode{"often"} }, `unknown fsync mode "often"`)
	f(func(c *Config) { c.Size = 50 }, "less than one record")
	f(func(c *Config) { c.RecordSize = 20 }, "too small for 3276 records")
	f(func(c *Config) { c.Dir = filepath.Join(dir, "missing") }, "cannot use the output directory")
	f(func(c *Config) { c.Size = 1 << 60 }, "not enough free space")
	// A failing child is reported with its stderr.
	f(func(c *Config) { c.ChildEnv = nil; c.ChildCommand = []string{"false"} }, "child failed")
	_, err := Run(context.Background(), func() Config { c := testConfig(dir); c.Size = 1 << 60; return c }())
	if !errors.Is(err, ErrNoSpace) {
		t.Fatalf("err = %v, want ErrNoSpace", err)
	}
}
