package conformance

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestNormalizeValue(t *testing.T) {
	f := func(in, want string) {
		t.Helper()
		if got := normalizeValue(in); got != want {
			t.Errorf("normalizeValue(%q) = %q; want %q", in, got, want)
		}
	}
	// Numbers: shortest plain decimal form, exactly.
	f("1470.0", "1470")
	f("1470", "1470")
	f("1.47e3", "1470")
	f("1.47E+3", "1470")
	f("-0.0", "0")
	f("-0", "0")
	f("0", "0")
	f("0.0", "0")
	f("2.5E-3", "0.0025")
	f("-12.50", "-12.5")
	f("1e3", "1000")
	f("1.5e2", "150")
	f("18446744073709551615", "18446744073709551615")
	f("0.30000000000000004", "0.30000000000000004")
	f("123456789e-9", "0.123456789")
	f("1e999999999", "1e999999999")
	f("-1E-99999999999999999999", "-1E-99999999999999999999")
	// Not JSON numbers: untouched.
	f("007", "007")
	f("5xx", "5xx")
	f("+1", "+1")
	f(".5", ".5")
	f("1.", "1.")
	f("1_000", "1_000")
	f("NaN", "NaN")
	f("Inf", "Inf")
	f("", "")
	f("slow", "slow")
	// Times: UTC, fraction trimmed, nanoseconds kept.
	f("2026-01-01T00:00:00.050Z", "2026-01-01T00:00:00.05Z")
	f("2026-01-01T00:03:00Z", "2026-01-01T00:03:00Z")
	f("2026-01-01T00:03:00.000Z", "2026-01-01T00:03:00Z")
	f("2026-01-02T00:00:00.123456789Z", "2026-01-02T00:00:00.123456789Z")
	f("2026-01-02T02:30:00+02:00", "2026-01-02T00:30:00Z")
	f("2026-01-01T01:00:00.5-01:30", "2026-01-01T02:30:00.5Z")
	f("2026-01-02", "2026-01-02")
	f("2026-01-02 00:00:00Z", "2026-01-02 00:00:00Z")
	// JSON structure text: keys sorted, same rewriting inside, empty dropped
	// from objects, array order kept, 1 and "1" the same.
	f(`[1,2,3]`, `["1","2","3"]`)
	f(`["1", 2.0, 3e0]`, `["1","2","3"]`)
	f(`[3,2,1]`, `["3","2","1"]`)
	f(`{"b":"x","a":1}`, `{"a":"1","b":"x"}`)
	f(`{"a":1.0, "e":"", "n":null, "t":"2026-01-01T00:00:00.500Z"}`, `{"a":"1","t":"2026-01-01T00:00:00.5Z"}`)
	f(`[{"a":1},{"b":"x"}]`, `["{\"a\":\"1\"}","{\"b\":\"x\"}"]`)
	f(`{"o":{"k":"v"}}`, `{"o":"{\"k\":\"v\"}"}`)
	f(`{"o":"{\"k\":\"v\"}"}`, `{"o":"{\"k\":\"v\"}"}`)
	f(`[]`, `[]`)
	f(`{}`, `{}`)
	f(`{not json`, `{not json`)
	f(`[1,2`, `[1,2`)
}

func TestCompareSuccess(t *testing.T) {
	f := func(c Case, got []map[string]string) {
		t.Helper()
		if err := Compare(c, got); err != nil {
			t.Errorf("Compare(%s): unexpected error: %s", c.ID, err)
		}
	}
	rows := func(rs ...map[string]string) []map[string]string { return rs }
	approx := func(s string) *string { return &s }

	// Missing, null and "" are the same.
	f(Case{ID: "empty", Expected: rows(map[string]string{"n": "37"})},
		rows(map[string]string{"n": "37", "level": ""}))
	// Number and time text.
	f(Case{ID: "num", Expected: rows(map[string]string{"x": "1470", "t": "2026-01-01T00:00:00.05Z"})},
		rows(map[string]string{"x": "1.47e3", "t": "2026-01-01T01:00:00.050+01:00"}))
	// JSON text compares as a structure.
	f(Case{ID: "json", Expected: rows(map[string]string{"r": `{"_time":"2026-01-01T00:03:07Z","service":"edge","latency_ms":"-12.5"}`})},
		rows(map[string]string{"r": `{"latency_ms":-12.50,"service":"edge","_time":"2026-01-01T00:03:07.000Z"}`}))
	// Multiset with duplicates, any order.
	f(Case{ID: "multiset", Expected: rows(
		map[string]string{"v": "500"}, map[string]string{"v": "502"}, map[string]string{"v": "500"})},
		rows(map[string]string{"v": "502"}, map[string]string{"v": "500"}, map[string]string{"v": "500.0"}))
	// Ordered.
	f(Case{ID: "ordered", Ordered: true, Expected: rows(
		map[string]string{"v": "1"}, map[string]string{"v": "2"})},
		rows(map[string]string{"v": "1"}, map[string]string{"v": "2"}))
	// Approx: within the tolerance.
	f(Case{ID: "approx", Approx: approx("rel=1e-9: float sum"), Expected: rows(map[string]string{"s": "402521.8049999998"})},
		rows(map[string]string{"s": "402521.80500000005"}))
	f(Case{ID: "approx-multi", Approx: approx("rel=0.05: sampled"), Expected: rows(
		map[string]string{"k": "a", "m": "100"}, map[string]string{"k": "b", "m": "200"})},
		rows(map[string]string{"k": "b", "m": "204"}, map[string]string{"k": "a", "m": "97"}))
	// No rows on either side.
	f(Case{ID: "none"}, nil)
	f(Case{ID: "none-empty-row", Expected: rows()}, rows())
}

func TestCompareFailure(t *testing.T) {
	f := func(c Case, got []map[string]string, wantInErr string) {
		t.Helper()
		err := Compare(c, got)
		if err == nil {
			t.Errorf("Compare(%s): expected an error", c.ID)
			return
		}
		if !strings.Contains(err.Error(), wantInErr) {
			t.Errorf("Compare(%s): error %q does not contain %q", c.ID, err, wantInErr)
		}
	}
	rows := func(rs ...map[string]string) []map[string]string { return rs }
	approx := func(s string) *string { return &s }
	status := 400

	f(Case{ID: "value", Expected: rows(map[string]string{"n": "44"})},
		rows(map[string]string{"n": "45"}), `missing row: {"n":"44"}`)
	f(Case{ID: "extra-field", Expected: rows(map[string]string{"n": "44"})},
		rows(map[string]string{"n": "44", "x": "1"}), `closest unmatched got row: {"n":"44","x":"1"}`)
	f(Case{ID: "dup", Expected: rows(map[string]string{"v": "1"}, map[string]string{"v": "1"})},
		rows(map[string]string{"v": "1"}, map[string]string{"v": "2"}), "got 2 rows, want 2")
	f(Case{ID: "extra-row", Expected: rows(map[string]string{"v": "1"})},
		rows(map[string]string{"v": "1"}, map[string]string{"v": "2"}), `unexpected row: {"v":"2"}`)
	f(Case{ID: "order", Ordered: true, Expected: rows(map[string]string{"v": "1"}, map[string]string{"v": "2"})},
		rows(map[string]string{"v": "2"}, map[string]string{"v": "1"}), "row 0 differs")
	f(Case{ID: "short", Ordered: true, Expected: rows(map[string]string{"v": "1"}, map[string]string{"v": "2"})},
		rows(map[string]string{"v": "1"}), "first missing row 1")
	f(Case{ID: "007", Expected: rows(map[string]string{"code": "007"})},
		rows(map[string]string{"code": "7"}), "missing row")
	f(Case{ID: "array-order", Expected: rows(map[string]string{"v": `[1,2]`})},
		rows(map[string]string{"v": `[2,1]`}), "missing row")
	f(Case{ID: "approx-out", Approx: approx("rel=1e-9: x"), Expected: rows(map[string]string{"s": "100"})},
		rows(map[string]string{"s": "100.001"}), "missing row")
	f(Case{ID: "exact-no-tolerance", Expected: rows(map[string]string{"s": "100"})},
		rows(map[string]string{"s": "100.0000000001"}), "missing row")
	f(Case{ID: "error", Error: &status}, nil, "expects the query to fail")
	f(Case{ID: "bad-approx", Approx: approx("about 5%"), Expected: rows(map[string]string{"s": "1"})},
		rows(map[string]string{"s": "1"}), "rel=")
}

func TestParseNDJSONRows(t *testing.T) {
	f := func(in string, want []map[string]string) {
		t.Helper()
		got, err := ParseNDJSONRows([]byte(in))
		if err != nil {
			t.Fatalf("ParseNDJSONRows(%q): %s", in, err)
		}
		if len(got) != len(want) {
			t.Fatalf("ParseNDJSONRows(%q): got %d rows %v; want %d", in, len(got), got, len(want))
		}
		for i := range got {
			if rowText(got[i]) != rowText(want[i]) {
				t.Errorf("ParseNDJSONRows(%q) row %d = %s; want %s", in, i, rowText(got[i]), rowText(want[i]))
			}
		}
	}
	f(`{"a":"x","n":1470.0,"b":true,"c":false,"z":null}`+"\n",
		[]map[string]string{{"a": "x", "n": "1470.0", "b": "true", "c": "false", "z": ""}})
	f("{\"a\":1}\n\n{\"a\":2}", []map[string]string{{"a": "1"}, {"a": "2"}})
	f(`{"o":{"k":1},"l":[1, "x"]}`, []map[string]string{{"o": `{"k":1}`, "l": `[1,"x"]`}})
	f("", nil)

	for _, bad := range []string{`[1,2]`, `{"a":1} x`, `not json`, `null`} {
		if _, err := ParseNDJSONRows([]byte(bad)); err == nil {
			t.Errorf("ParseNDJSONRows(%q): expected an error", bad)
		}
	}
}

func TestLoadCases(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "cases.jsonl")
	data := `{"id": "filter-word-1", "query": "error | stats count() as n", "ordered": false, "expected": [{"n": "44"}], "approx": null, "error": null}

{"id": "error-1", "query": "* | stats foo()", "ordered": false, "expected": [], "approx": null, "error": 400}
{"id": "stats-sum-3", "query": "x", "ordered": true, "expected": [{"s": "1.5"}], "approx": "rel=1e-9: why", "error": null}
`
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	cases, err := LoadCases(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) != 3 {
		t.Fatalf("got %d cases; want 3", len(cases))
	}
	if c := cases[0]; c.ID != "filter-word-1" || c.Query != "error | stats count() as n" || c.Ordered || c.Error != nil || c.Approx != nil || len(c.Expected) != 1 || c.Expected[0]["n"] != "44" {
		t.Errorf("case 0 = %+v", c)
	}
	if c := cases[1]; c.Error == nil || *c.Error != 400 || len(c.Expected) != 0 {
		t.Errorf("case 1 = %+v", c)
	}
	if c := cases[2]; !c.Ordered || c.Approx == nil || *c.Approx != "rel=1e-9: why" {
		t.Errorf("case 2 = %+v", c)
	}

	// The shared corpus, when present, loads and has the documented size.
	shared := filepath.Join("..", "..", "..", "shared", "conformance", "cases.jsonl")
	if _, err := os.Stat(shared); err == nil {
		cases, err := LoadCases(shared)
		if err != nil {
			t.Fatal(err)
		}
		if len(cases) != 223 {
			t.Errorf("shared corpus: got %d cases; want 223", len(cases))
		}
	}
}
