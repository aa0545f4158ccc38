package logstream

import (
	"testing"
)

// TestVictoriaLogs checks _stream and _stream_id against what VictoriaLogs
// v1.52.1 answered for lines ingested with
// _stream_fields=service,host,kubernetes.pod into tenants 0:0 and 7:8
// (/select/logsql/query, '* | fields _msg, _stream, _stream_id').
func TestVictoriaLogs(t *testing.T) {
	f := func(tags []Tag, account, project uint32, wantText, wantID string) {
		t.Helper()
		tags = append([]Tag(nil), tags...)
		Sort(tags)
		if got := string(AppendText(nil, tags)); got != wantText {
			t.Fatalf("AppendText(%v) = %s, want %s", tags, got, wantText)
		}
		if got := string(AppendID(nil, account, project, AppendCanonical(nil, tags))); got != wantID {
			t.Fatalf("AppendID(%d:%d, %v) = %s, want %s", account, project, tags, got, wantID)
		}
		back, ok := Parse(nil, wantText)
		if !ok || len(back) != len(tags) {
			t.Fatalf("Parse(%s) = %v, %v", wantText, back, ok)
		}
		for i := range back {
			if back[i] != tags[i] {
				t.Fatalf("Parse(%s) = %v, want %v", wantText, back, tags)
			}
		}
	}
	f([]Tag{{"service", "api"}, {"host", "h1"}}, 0, 0, `{host="h1",service="api"}`, "0000000000000000b1806a4354a4ec2201d6268e4991f762")
	f([]Tag{{"service", "api"}}, 0, 0, `{service="api"}`, "000000000000000006ea53c6272f075b2cc7f8692a30c236")
	f(nil, 0, 0, `{}`, "0000000000000000e934a84adb05276890d7f7bfcadabe92")
	f([]Tag{{"service", "web \"quoted\" é\x01\t"}, {"host", "h2"}, {"kubernetes.pod", "p-1"}}, 0, 0,
		`{host="h2",kubernetes.pod="p-1",service="web \"quoted\" é\x01\t"}`, "0000000000000000b64c220a09a4e4dcf340ccdb71e0a1d3")
	f([]Tag{{"host", "h3"}}, 0, 0, `{host="h3"}`, "0000000000000000e1b869a3c303f27c7bfd977afb79b48e")
	f([]Tag{{"service", "123"}, {"host", "true"}}, 0, 0, `{host="true",service="123"}`, "0000000000000000088c4138b2da5a7149a5fd6d8d2c17ff")
	f([]Tag{{"service", "api"}, {"host", "h1"}}, 7, 8, `{host="h1",service="api"}`, "0000000700000008b1806a4354a4ec2201d6268e4991f762")
	f(nil, 7, 8, `{}`, "0000000700000008e934a84adb05276890d7f7bfcadabe92")
}

func TestParse(t *testing.T) {
	bad := func(s string) {
		t.Helper()
		if tags, ok := Parse(nil, s); ok {
			t.Fatalf("Parse(%q) = %v, want failure", s, tags)
		}
	}
	bad("")
	bad("{")
	bad("x")
	bad(`{a=b}`)
	bad(`{a="b"`)
	bad(`{a="b",}`)
	bad(`{a="b" c="d"}`)
	bad(`{a="\q"}`)
	bad(`{="b"x}`)
	tags, ok := Parse([]Tag{{"keep", "me"}}, `{a="1",b="x\"y",c=""}`)
	if !ok || len(tags) != 4 || tags[2] != (Tag{"b", `x"y`}) || tags[3] != (Tag{"c", ""}) {
		t.Fatalf("Parse = %v, %v", tags, ok)
	}
	if Value(tags, "b") != `x"y` || Value(tags, "zz") != "" {
		t.Fatal("Value")
	}
}

func BenchmarkID(b *testing.B) {
	tags := []Tag{{"host", "api-04.us-east-1.internal"}, {"service", "api-gateway"}}
	var buf, canon []byte
	b.ReportAllocs()
	for b.Loop() {
		canon = AppendCanonical(canon[:0], tags)
		buf = AppendID(buf[:0], 0, 0, canon)
	}
	b.SetBytes(int64(len(canon)))
}
