package benchwrite

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// testRecords returns n records of size bytes.
func testRecords(t testing.TB, n int64, size int) Records {
	t.Helper()
	recs, err := MakeRecords(n, size)
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

func TestMakeRecords(t *testing.T) {
	f := func(n int64, size int) {
		t.Helper()
		recs, err := MakeRecords(n, size)
		if err != nil {
			t.Fatalf("MakeRecords(%d, %d): %v", n, size, err)
		}
		if recs.Len() != int(n) || len(recs.Data) != int(n)*size {
			t.Fatalf("MakeRecords(%d, %d): %d records in %d bytes", n, size, recs.Len(), len(recs.Data))
		}
		seen := map[string]bool{}
		for i := range recs.Len() {
			r := recs.At(i)
			if len(r) != size || r[size-1] != '\n' || bytes.Count(r, []byte{'\n'}) != 1 {
				t.Fatalf("record %d = %q: want %d bytes ending in the only newline", i, r, size)
			}
			var v struct {
				Seq int64  `json:"seq"`
				Msg string `json:"msg"`
			}
			if err := json.Unmarshal(r, &v); err != nil || v.Seq != int64(i) || v.Msg == "" {
				t.Fatalf("record %d = %q: %v, seq %d", i, r, err, v.Seq)
			}
			if seen[string(r)] {
				t.Fatalf("record %d repeats an earlier one: %q", i, r)
			}
			seen[string(r)] = true
		}
		again, _ := MakeRecords(n, size)
		if !bytes.Equal(again.Data, recs.Data) {
			t.Fatalf("MakeRecords(%d, %d) is not deterministic", n, size)
		}
	}
	f(1, MinRecordSize(1))
	f(10, MinRecordSize(10))
	f(11, MinRecordSize(11)) // seq 10 has two digits
	f(1000, 100)
	f(3, 4096)
}

func TestMakeRecordsFailure(t *testing.T) {
	f := func(n int64, size int, want string) {
		t.Helper()
		_, err := MakeRecords(n, size)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("MakeRecords(%d, %d): err = %v, want it to contain %q", n, size, err, want)
		}
	}
	f(0, 100, "want at least 1")
	f(1, MinRecordSize(1)-1, "1 records need at least 20 bytes")
	f(1000, 21, "1000 records need at least 22 bytes")
}
