package segment

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spate-io/spate/internal/bytesutil"
)

// DayLayout is the time layout of a day partition: the UTC date, as in
// "2026-11-22". It names the directories under a store's DIR.
const DayLayout = "2006-01-02"

// DayOf returns t's day partition: its UTC date formatted with DayLayout.
func DayOf(t time.Time) string { return t.UTC().Format(DayLayout) }

// validDay reports whether s is a real date in DayLayout form. It does not
// allocate: Append calls it once per group.
func validDay(s string) bool {
	if len(s) != len(DayLayout) || s[4] != '-' || s[7] != '-' {
		return false
	}
	y, ok1 := bytesutil.ParseDigits(s[0:4])
	m, ok2 := bytesutil.ParseDigits(s[5:7])
	d, ok3 := bytesutil.ParseDigits(s[8:10])
	if !ok1 || !ok2 || !ok3 || m < 1 || m > 12 || d < 1 {
		return false
	}
	// Day 0 of the next month is the last day of month m.
	return d <= time.Date(y, time.Month(m+1), 0, 0, 0, 0, 0, time.UTC).Day()
}

// File names inside a day directory. A segment's sequence number is global
// to the store (not per day) and is written with seqDigits decimal digits,
// so names sort in creation order.
const (
	segPrefix = "seg-"
	extPlain  = ".ndjson"
	extZstd   = ".ndjson.zst"
	extTmp    = ".tmp" // appended to extZstd while compressing
	seqDigits = 16
	lockName  = ".lock" // in DIR itself; see lockDir
)

// fileKind is what a segment file name says about its content.
type fileKind uint8

const (
	kindPlain fileKind = iota // seg-N.ndjson: active, or sealed and not compressed
	kindZstd                  // seg-N.ndjson.zst: sealed and compressed, complete
	kindTmp                   // seg-N.ndjson.zst.tmp: compression in progress or abandoned
)

// segName returns the file name of segment seq of kind k.
func segName(seq uint64, k fileKind) string {
	var ext string
	switch k {
	case kindPlain:
		ext = extPlain
	case kindZstd:
		ext = extZstd
	case kindTmp:
		ext = extZstd + extTmp
	}
	return fmt.Sprintf("%s%0*d%s", segPrefix, seqDigits, seq, ext)
}

// parseSegName is the inverse of segName. Any other name gives ok == false.
func parseSegName(name string) (seq uint64, k fileKind, ok bool) {
	rest, found := strings.CutPrefix(name, segPrefix)
	if !found || len(rest) < seqDigits {
		return 0, 0, false
	}
	digits, ext := rest[:seqDigits], rest[seqDigits:]
	switch ext {
	case extPlain:
		k = kindPlain
	case extZstd:
		k = kindZstd
	case extZstd + extTmp:
		k = kindTmp
	default:
		return 0, 0, false
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return 0, 0, false
		}
	}
	seq, err := strconv.ParseUint(digits, 10, 64)
	if err != nil {
		return 0, 0, false
	}
	return seq, k, true
}

// tenantDirName returns the directory of tenant t under DIR:
// "AccountID-ProjectID", e.g. "0-0".
func tenantDirName(t Tenant) string {
	return strconv.FormatUint(uint64(t.AccountID), 10) + "-" + strconv.FormatUint(uint64(t.ProjectID), 10)
}

// parseTenantDir is the inverse of tenantDirName; any other name (leading
// zeros included) gives ok == false.
func parseTenantDir(name string) (t Tenant, ok bool) {
	a, p, found := strings.Cut(name, "-")
	if !found {
		return t, false
	}
	acc, err1 := strconv.ParseUint(a, 10, 32)
	proj, err2 := strconv.ParseUint(p, 10, 32)
	t = Tenant{uint32(acc), uint32(proj)}
	return t, err1 == nil && err2 == nil && tenantDirName(t) == name
}

// dirFile is one segment file found by scanDir.
type dirFile struct {
	name string // base name
	seq  uint64
	kind fileKind
}

// dayDir is one day directory found by scanDir, its files sorted by
// sequence then kind (plain, zstd, tmp).
type dayDir struct {
	tenant Tenant
	day    string
	// dir is the directory relative to DIR: "0-0/2026-11-22", or
	// "2026-11-22" in the layout before tenants (legacy, tenant 0:0), which
	// Open moves under "0-0".
	dir    string
	legacy bool
	files  []dirFile
	// metas are the sequence numbers with a metadata file.
	metas []uint64
	// sidecars are the names of segment indexes (seg-N.ndjson.zst.idx)
	// and their temp files (.idx.tmp).
	sidecars []string
}

// scanDir lists the day directories under root, by tenant then date (a
// legacy one before its tenant's), with their segment files. Names that
// are not tenants, days or segments are ignored, as are symlinks and other
// non-regular entries.
func scanDir(root *os.Root) ([]dayDir, error) { return scanDirStamped(root, nil) }

// scanDirStamped is scanDir, appending to stamps (if not nil) each
// directory it reads with its modification time, taken before its entries
// are read.
func scanDirStamped(root *os.Root, stamps *[]dirStamp) ([]dayDir, error) {
	ents, err := readDir(root, ".", stamps)
	if err != nil {
		return nil, err
	}
	var days []dayDir
	addDay := func(tenant Tenant, day, dir string, legacy bool) error {
		files, err := readDir(root, dir, stamps)
		if err != nil {
			return err
		}
		d := dayDir{tenant: tenant, day: day, dir: dir, legacy: legacy}
		for _, f := range files {
			if !f.Type().IsRegular() {
				continue
			}
			if seq, k, ok := parseSegName(f.Name()); ok {
				d.files = append(d.files, dirFile{name: f.Name(), seq: seq, kind: k})
			} else if seq, ok := parseMetaName(f.Name()); ok {
				d.metas = append(d.metas, seq)
			} else if isSidecar(f.Name()) {
				d.sidecars = append(d.sidecars, f.Name())
			}
		}
		slices.SortFunc(d.files, func(a, b dirFile) int {
			return cmp.Or(cmp.Compare(a.seq, b.seq), cmp.Compare(a.kind, b.kind))
		})
		days = append(days, d)
		return nil
	}
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		if validDay(e.Name()) {
			if err := addDay(Tenant{}, e.Name(), e.Name(), true); err != nil {
				return nil, err
			}
			continue
		}
		t, ok := parseTenantDir(e.Name())
		if !ok {
			continue
		}
		sub, err := readDir(root, e.Name(), stamps)
		if err != nil {
			return nil, err
		}
		for _, d := range sub {
			if d.IsDir() && validDay(d.Name()) {
				if err := addDay(t, d.Name(), e.Name()+"/"+d.Name(), false); err != nil {
					return nil, err
				}
			}
		}
	}
	slices.SortFunc(days, func(a, b dayDir) int {
		return cmp.Or(cmp.Compare(a.tenant.AccountID, b.tenant.AccountID), cmp.Compare(a.tenant.ProjectID, b.tenant.ProjectID),
			strings.Compare(a.day, b.day), -cmp.Compare(btoi(a.legacy), btoi(b.legacy)))
	})
	return days, nil
}

// isSidecar reports whether name is a segment index or its temp file.
func isSidecar(name string) bool {
	base := strings.TrimSuffix(name, extTmp)
	z, ok := strings.CutSuffix(base, idxExt)
	_, k, seg := parseSegName(z)
	return ok && seg && k == kindZstd
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// readDir lists the directory name under root, first appending it and
// its modification time to stamps if not nil.
func readDir(root *os.Root, name string, stamps *[]dirStamp) ([]fs.DirEntry, error) {
	d, err := root.Open(name)
	if err != nil {
		return nil, fmt.Errorf("cannot open directory %q: %w", name, err)
	}
	defer d.Close()
	if stamps != nil {
		fi, err := d.Stat()
		if err != nil {
			return nil, fmt.Errorf("cannot read directory %q: %w", name, err)
		}
		*stamps = append(*stamps, dirStamp{name: name, mtime: fi.ModTime().UnixNano()})
	}
	ents, err := d.ReadDir(-1)
	if err != nil {
		return nil, fmt.Errorf("cannot read directory %q: %w", name, err)
	}
	return ents, nil
}

// syncDir fsyncs the directory name under root ("." for root itself), so
// that files created, renamed or removed in it stay so after a crash.
func syncDir(root *os.Root, name string) error {
	d, err := root.Open(name)
	if err != nil {
		return fmt.Errorf("cannot open directory %q: %w", name, err)
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("cannot sync directory %q: %w", name, err)
	}
	return nil
}

// lastLineEnd returns the length of r's first size bytes up to and
// including their last '\n', or 0 if they hold none. It reads backwards in
// 64 KiB steps, so a complete tail costs one small read.
func lastLineEnd(r io.ReaderAt, size int64) (int64, error) {
	var buf [64 << 10]byte
	for end := size; end > 0; {
		start := max(0, end-int64(len(buf)))
		p := buf[:end-start]
		if _, err := r.ReadAt(p, start); err != nil && !errors.Is(err, io.EOF) {
			return 0, err
		}
		for i := len(p) - 1; i >= 0; i-- {
			if p[i] == '\n' {
				return start + int64(i) + 1, nil
			}
		}
		end = start
	}
	return 0, nil
}

// IsStoreDir reports whether dir is a store's directory: it holds the lock
// file every Open creates.
func IsStoreDir(dir string) bool {
	fi, err := os.Lstat(filepath.Join(dir, lockName))
	return err == nil && fi.Mode().IsRegular()
}

// File is one readable segment file, as listed by List.
type File struct {
	Tenant     Tenant // the data set
	Day        string // the day partition, in DayLayout form
	Seq        uint64 // the segment's sequence number, unique within the store
	Path       string // relative to the store's DIR, e.g. "0-0/2026-11-22/seg-0000000000000007.ndjson.zst"
	Compressed bool   // Path is a zstd frame (.ndjson.zst); otherwise plain NDJSON
	Size       int64  // bytes on disk when listed (an active segment keeps growing)
	Mtime      int64  // its modification time when listed, Unix ns
}

// List returns the segment files under dir, of every tenant, in tenant,
// day, then sequence order: every line the store has written is in exactly
// one of them. It applies the reading rules of the package doc: when both
// seg-N.ndjson and seg-N.ndjson.zst exist, only the .zst is listed; .tmp
// files are skipped. Day directories of the layout before tenants
// (DIR/YYYY-MM-DD) are listed as tenant 0:0.
//
// List does not lock dir and may run beside a Store writing it. A listed
// plain segment may be compressed and removed before it is opened: a
// reader that gets fs.ErrNotExist for "X.ndjson" should open "X.ndjson.zst"
// instead. The last line of the newest segment of a day may be incomplete
// while it is being written; readers should drop a final line without '\n'.
func List(dir string) ([]File, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("cannot open segment directory: %w", err)
	}
	defer root.Close()
	return list(root, dir, "", nil)
}

// list is List on an open root; dir names it in errors. With abs (dir's
// absolute path) not empty, the directories' listing may come from
// scanCache. dayRoot, if not
// nil, returns a day directory (relative to root) open as a root of its
// own, through which files are looked up by name: one system call each,
// where a path through root walks its directories.
func list(root *os.Root, dir, abs string, dayRoot func(dir string) (*os.Root, error)) ([]File, error) {
	var days []dayDir
	var err error
	if abs != "" {
		days, err = scanDirCached(root, abs)
	} else {
		days, err = scanDir(root)
	}
	if err != nil {
		return nil, fmt.Errorf("cannot list segments in %q: %w", dir, err)
	}
	var out []File
	for _, d := range days {
		for i, f := range d.files {
			if f.kind == kindTmp {
				continue
			}
			// files are sorted by (seq, kind), so a .zst follows its .ndjson.
			if f.kind == kindPlain && i+1 < len(d.files) && d.files[i+1].seq == f.seq && d.files[i+1].kind == kindZstd {
				continue
			}
			kind := f.kind
			name := f.name
			stat := func() (fs.FileInfo, error) {
				if dayRoot == nil {
					return root.Stat(d.dir + "/" + name)
				}
				dr, err := dayRoot(d.dir)
				if err != nil {
					return nil, err
				}
				return dr.Stat(name)
			}
			fi, err := stat()
			if kind == kindPlain && errors.Is(err, fs.ErrNotExist) {
				// Compressed and removed since scanDir.
				kind = kindZstd
				name = segName(f.seq, kindZstd)
				fi, err = stat()
			}
			p := d.dir + "/" + name
			if err != nil {
				return nil, fmt.Errorf("cannot list segments in %q: %w", dir, err)
			}
			out = append(out, File{Tenant: d.tenant, Day: d.day, Seq: f.seq, Path: p, Compressed: kind == kindZstd, Size: fi.Size(), Mtime: fi.ModTime().UnixNano()})
		}
	}
	return out, nil
}
