package cli

import (
	"cmp"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// compressedExts are the name suffixes of the compressed files spate
// reads (it knows them by their first bytes; names matter only to
// rotated sets, which drop the suffix, and to -f, which does not follow
// them).
var compressedExts = []string{".gz", ".zst", ".bz2", ".xz"}

// sortRotated sorts file paths in name order, except that the files of a
// rotated set are read oldest first, as the lines were written: for
// app.log, its numbered rotations (app.log.3.gz, app.log.2, app.log.1: the
// higher the number, the older), then its dated ones (app.log-20261123.gz,
// app.log.2026-11-24: by date), then app.log itself.
func sortRotated(paths []string) {
	type keyed struct {
		path string
		base string // the live file's path
		kind int    // 0 numbered, 1 dated, 2 the live file
		n    int    // numbered: the number
		date string // dated: the date digits
	}
	ks := make([]keyed, len(paths))
	for i, p := range paths {
		k := keyed{path: p, kind: 2}
		dir, name := filepath.Split(p)
		for _, ext := range compressedExts {
			name = strings.TrimSuffix(name, ext)
		}
		if j := strings.LastIndexByte(name, '.'); j > 0 {
			if n, err := strconv.Atoi(name[j+1:]); err == nil && n >= 0 && len(name)-j-1 <= 4 {
				k.kind, k.n, name = 0, n, name[:j]
			}
		}
		if k.kind == 2 {
			// The longest date after a '.', '-' or '_': app.log.2026-11-25.
			for j := len(name) - 1; j > 0; j-- {
				if c := name[j]; c == '.' || c == '-' || c == '_' {
					if d, ok := dateSuffix(name[j+1:]); ok {
						k.kind, k.date, k.base = 1, d, dir+name[:j]
					}
				}
			}
			if k.kind == 1 {
				ks[i] = k
				continue
			}
		}
		k.base = dir + name
		ks[i] = k
	}
	slices.SortStableFunc(ks, func(a, b keyed) int {
		if c := cmp.Compare(a.base, b.base); c != 0 {
			return c
		}
		if a.kind != b.kind {
			return cmp.Compare(a.kind, b.kind)
		}
		switch a.kind {
		case 0:
			return cmp.Compare(b.n, a.n) // higher numbers are older
		case 1:
			return cmp.Compare(a.date, b.date)
		}
		return cmp.Compare(a.path, b.path)
	})
	for i := range ks {
		paths[i] = ks[i].path
	}
}

// dateSuffix reports whether s is a rotation date, YYYYMMDD or
// YYYY-MM-DD, optionally followed by more digits or -digits (an hour, a
// timestamp), and returns its digits.
func dateSuffix(s string) (string, bool) {
	digits := strings.Map(func(r rune) rune {
		if r == '-' {
			return -1
		}
		return r
	}, s)
	if len(digits) < 8 || len(digits) > 14 || !(strings.HasPrefix(digits, "19") || strings.HasPrefix(digits, "20")) {
		return "", false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return "", false
		}
	}
	return digits, true
}
