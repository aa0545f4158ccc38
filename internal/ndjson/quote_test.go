package ndjson

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestAppendQuoted(t *testing.T) {
	f := func(in, want string) {
		t.Helper()
		got := string(AppendQuoted(nil, in))
		if got != want {
			t.Fatalf("AppendQuoted(%q) = %s, want %s", in, got, want)
		}
		var back string
		if err := json.Unmarshal([]byte(got), &back); err != nil {
			t.Fatalf("AppendQuoted(%q) = %s: not valid JSON: %v", in, got, err)
		}
		if utf8.ValidString(in) && back != in {
			t.Fatalf("AppendQuoted(%q) decodes to %q", in, back)
		}
	}
	f("", `""`)
	f("plain", `"plain"`)
	f("tab\there \"q\" \\", `"tab\there \"q\" \\"`)
	f("\x01\n\r", `"\u0001\n\r"`)
	f("é 用户", `"é 用户"`)
	f("bad \xff utf8", `"bad \ufffd utf8"`)
}

// appendQuotedRef is AppendQuoted as it was before its 8-byte fast path,
// one byte at a time: the reference of FuzzAppendQuoted and the baseline of
// BenchmarkAppendQuoted.
func appendQuotedRef(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i++
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

func FuzzAppendQuoted(f *testing.F) {
	for _, s := range []string{"", "plain text of some length", "tab\there \"q\" \\ and more", "é 用户 long ascii run here", "bad \xff utf8 after eight", "\x01\n\r0123456789"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, want := AppendQuoted(nil, s), appendQuotedRef(nil, s)
		if string(got) != string(want) {
			t.Fatalf("AppendQuoted(%q) = %s, want %s", s, got, want)
		}
		if p := Plain(s); p != (string(want) == `"`+s+`"` && isASCII(s)) {
			t.Fatalf("Plain(%q) = %v", s, p)
		}
	})
}

func BenchmarkAppendQuoted(b *testing.B) {
	s := "GET /api/v1/users/12345 200 OK in 12ms from 10.0.0.1 user-agent curl/8.5.0"
	b.SetBytes(int64(len(s)))
	b.ReportAllocs()
	buf := make([]byte, 0, 256)
	for b.Loop() {
		buf = AppendQuoted(buf[:0], s)
	}
}

// BenchmarkAppendQuotedBytewise is the byte-at-a-time loop, the baseline
// of BenchmarkAppendQuoted's fast path.
func BenchmarkAppendQuotedBytewise(b *testing.B) {
	s := "GET /api/v1/users/12345 200 OK in 12ms from 10.0.0.1 user-agent curl/8.5.0"
	b.SetBytes(int64(len(s)))
	b.ReportAllocs()
	buf := make([]byte, 0, 256)
	for b.Loop() {
		buf = appendQuotedRef(buf[:0], s)
	}
}

// shortFields are the names and values of a typical log line: most are
// shorter than 16 bytes.
var shortFields = []string{"_time", "service", "checkout", "level", "info", "status", "200", "method", "GET",
	"path", "/api/v1/users/{id}/orders", "latency_ms", "37", "bytes", "1532", "user", "u-000123",
	"trace_id", "4bf92f3577b34da6a3ce929d0e0e4736", "region", "eu-west-1", "host", "node-17"}

// BenchmarkAppendQuotedShort quotes a line's worth of short names and
// values (bytes: their total length), where the per-call cost counts.
func BenchmarkAppendQuotedShort(b *testing.B) {
	for _, impl := range []struct {
		name string
		f    func([]byte, string) []byte
	}{{"AppendQuoted", AppendQuoted}, {"bytewise", appendQuotedRef}} {
		b.Run(impl.name, func(b *testing.B) {
			n := 0
			for _, s := range shortFields {
				n += len(s)
			}
			b.SetBytes(int64(n))
			b.ReportAllocs()
			buf := make([]byte, 0, 1024)
			for b.Loop() {
				buf = buf[:0]
				for _, s := range shortFields {
					buf = impl.f(buf, s)
				}
			}
		})
	}
}

func isASCII(s string) bool {
	for i := range len(s) {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// TestPlain puts each byte that needs escaping, and a non-ASCII one, at
// every position of strings of 0 to 20 bytes.
func TestPlain(t *testing.T) {
	for n := range 21 {
		base := strings.Repeat("a", n)
		if !Plain(base) {
			t.Fatalf("Plain(%q) = false", base)
		}
		for i := range n {
			for _, c := range []byte{'"', '\\', 0, 0x1f, 0x80, 0xff} {
				b := []byte(base)
				b[i] = c
				if Plain(string(b)) {
					t.Fatalf("Plain(%q) = true", b)
				}
			}
			b := []byte(base)
			b[i] = 0x7f // DEL needs no escaping
			if !Plain(string(b)) {
				t.Fatalf("Plain(%q) = false", b)
			}
		}
	}
}
