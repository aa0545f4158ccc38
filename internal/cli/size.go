package cli

import (
	"fmt"
	"strconv"
	"strings"
)

// sizeFlag is a byte count flag that accepts plain numbers and binary or
// decimal suffixes: 512, 64KiB, 8MiB, 1GiB, 2GB, 1.5G (G alone means GiB).
type sizeFlag int64

func (s *sizeFlag) String() string { return formatSize(int64(*s)) }
func (s *sizeFlag) Type() string   { return "size" }

func (s *sizeFlag) Set(v string) error {
	n, err := parseSize(v)
	if err != nil {
		return err
	}
	*s = sizeFlag(n)
	return nil
}

var sizeUnits = []struct {
	suffix string
	mult   float64
}{
	{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30}, {"tib", 1 << 40},
	{"kb", 1e3}, {"mb", 1e6}, {"gb", 1e9}, {"tb", 1e12},
	{"k", 1 << 10}, {"m", 1 << 20}, {"g", 1 << 30}, {"t", 1 << 40},
	{"b", 1},
}

// parseSize parses a byte count such as "1GiB", "512MB", "64k" or "4096".
func parseSize(v string) (int64, error) {
	s := strings.ToLower(strings.TrimSpace(v))
	mult := 1.0
	for _, u := range sizeUnits {
		if strings.HasSuffix(s, u.suffix) {
			s, mult = strings.TrimSpace(strings.TrimSuffix(s, u.suffix)), u.mult
			break
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f < 0 {
		return 0, fmt.Errorf("cannot parse size %q: want a number with an optional unit such as 64KiB, 8MiB, 1GiB or 2GB", v)
	}
	n := f * mult
	if n > 1<<62 {
		return 0, fmt.Errorf("cannot parse size %q: too large", v)
	}
	return int64(n), nil
}

// formatSize prints n with the largest binary unit that keeps it whole, or
// with one decimal for odd sizes: 1GiB, 1.5GiB, 4096 -> 4KiB, 1000 -> 1000B.
// Zero prints as "0", which flag help treats as "no default shown".
func formatSize(n int64) string {
	if n == 0 {
		return "0"
	}
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	f, i := float64(n), 0
	for f >= 1024 && i < len(units)-1 {
		f /= 1024
		i++
	}
	if f == float64(int64(f)) {
		return fmt.Sprintf("%d%s", int64(f), units[i])
	}
	return fmt.Sprintf("%.1f%s", f, units[i])
}
