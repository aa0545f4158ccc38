package timeparse

import "testing"

// BenchmarkParse measures one time value per format; the fast paths must
// not allocate.
func BenchmarkParse(b *testing.B) {
	for _, bc := range []struct{ name, s string }{
		{"rfc3339", "2026-01-02T03:04:05.123456Z"},
		{"rfc3339_offset", "2026-01-02T04:04:05.123+01:00"},
		{"unix_s", "1767323045"},
		{"unix_ms", "1767323045123"},
		{"unix_float", "1767323045.123"},
		{"no_zone", "2026-01-02 03:04:05.123"},
		{"python", "2026-01-02 03:04:05,123"},
		{"clf", "02/Jan/2026:03:04:05 -0700"},
		{"syslog", "Jan  2 03:04:05"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.s)))
			b.ReportAllocs()
			var sink int64
			for b.Loop() {
				ns, ok := Parse(bc.s)
				if !ok {
					b.Fatal(bc.s)
				}
				sink += ns
			}
			_ = sink
		})
	}
}

// BenchmarkAppendRFC3339 measures formatting _time into a reused buffer.
func BenchmarkAppendRFC3339(b *testing.B) {
	buf := make([]byte, 0, 64)
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendRFC3339(buf[:0], 1767323045_123456000)
	}
	b.SetBytes(int64(len(buf)))
}
