package esbulk

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
)

func readAll(t *testing.T, body string) (string, []Item, error) {
	t.Helper()
	r := NewReader(iotest.OneByteReader(strings.NewReader(body)))
	out, err := io.ReadAll(r)
	return string(out), r.Items(), err
}

func TestReaderItems(t *testing.T) {
	long := `{"message":"` + strings.Repeat("x", 3*MaxActionBytes) + `"}`
	body := "" +
		`{"index":{"_index":"logs","_id":"a1"}}` + "\n" +
		`{"@timestamp":"2026-11-26T00:00:00Z","message":"one"}` + "\n" +
		"\n" + // blank lines between items are skipped
		`{"create":{}}` + "\r\n" +
		long + "\n" +
		`{"delete":{"_index":"logs","_id":"x"}}` + "\n" +
		`{"update":{"_id":7}}` + "\n" +
		`{"doc":{"a":1}}` + "\n" +
		`{"index":{}}` + "\n" +
		"\n" + // an empty document
		`{"create":{}}` + "\n" +
		`{"message":"last, no newline"}`
	out, items, err := readAll(t, body)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"@timestamp":"2026-11-26T00:00:00Z","message":"one"}` + "\n" + long + "\n\n\n\n" + `{"message":"last, no newline"}` + "\n"
	if out != want {
		t.Fatalf("lines:\n%.300q\nwant\n%.300q", out, want)
	}
	wantItems := []Item{
		{Op: Index, Index: "logs", ID: "a1"},
		{Op: Create},
		{Op: Delete, Index: "logs", ID: "x", Err: "delete is not supported: logs are append-only"},
		{Op: Update, ID: "7", Err: "update is not supported: logs are append-only"},
		{Op: Index, Err: "the document is empty"},
		{Op: Create},
	}
	if len(items) != len(wantItems) {
		t.Fatalf("items %+v", items)
	}
	for i := range items {
		if items[i] != wantItems[i] {
			t.Errorf("item %d: %+v, want %+v", i, items[i], wantItems[i])
		}
	}
	if n := strings.Count(out, "\n"); n != len(items) {
		t.Errorf("%d lines for %d items", n, len(items))
	}
}

func TestReaderMissingDocument(t *testing.T) {
	out, items, err := readAll(t, `{"index":{}}`+"\n"+`{"a":1}`+"\n"+`{"create":{}}`+"\n")
	if err != nil || out != `{"a":1}`+"\n\n" || len(items) != 2 || items[1].Err != "the action has no document line after it" {
		t.Fatalf("%q %+v %v", out, items, err)
	}
}

func TestReaderSyntaxErrors(t *testing.T) {
	for name, body := range map[string]string{
		"not json":     "{\"index\":{}}\n{}\nnot json\n{}\n",
		"two keys":     "{\"index\":{},\"create\":{}}\n{}\n",
		"unknown":      "{\"upsert\":{}}\n{}\n",
		"meta":         "{\"index\":3}\n{}\n",
		"long action":  "{\"index\":{\"_id\":\"" + strings.Repeat("y", MaxActionBytes) + "\"}}\n{}\n",
		"array action": "[1]\n{}\n",
	} {
		_, _, err := readAll(t, body)
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Errorf("%s: %v, want a SyntaxError", name, err)
		}
	}
	_, items, err := readAll(t, "{\"index\":{}}\n{\"a\":1}\nnot json\n")
	var se *SyntaxError
	if !errors.As(err, &se) || se.Line != 3 || len(items) != 1 {
		t.Fatalf("%v %+v", err, items)
	}
}

func TestAppendResponse(t *testing.T) {
	items := []Item{{Op: Index, Index: "logs", ID: "a\"1"}, {Op: Create}, {Op: Delete}}
	out := []Outcome{{Status: 201}, {Status: 400, Type: "document_parsing_exception", Reason: "bad \"json\""}, {Status: 429, Type: "es_rejected_execution_exception", Reason: "busy"}}
	b := AppendResponse(nil, 5, items, out)
	var resp struct {
		Took   int64
		Errors bool
		Items  []map[string]struct {
			Index  string `json:"_index"`
			ID     string `json:"_id"`
			Status int
			Result string
			Error  struct{ Type, Reason string }
		}
	}
	if err := json.Unmarshal(b, &resp); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	if resp.Took != 5 || !resp.Errors || len(resp.Items) != 3 {
		t.Fatalf("%s", b)
	}
	if it := resp.Items[0]["index"]; it.ID != `a"1` || it.Status != 201 || it.Result != "created" || it.Index != "logs" {
		t.Errorf("%+v", it)
	}
	if it := resp.Items[1]["create"]; it.Status != 400 || it.Error.Reason != `bad "json"` {
		t.Errorf("%+v", it)
	}
	if it := resp.Items[2]["delete"]; it.Status != 429 {
		t.Errorf("%+v", it)
	}
	ok := AppendResponse(nil, 1, items[:1], out[:1])
	if !bytes.Contains(ok, []byte(`"errors":false`)) {
		t.Errorf("%s", ok)
	}
	var e map[string]any
	if err := json.Unmarshal(AppendError(nil, 400, "illegal_argument_exception", "x \"y\""), &e); err != nil || e["status"] != float64(400) {
		t.Errorf("%v %v", e, err)
	}
}

// FuzzReader: any body reads to an end without panicking, one output line
// per item.
func FuzzReader(f *testing.F) {
	f.Add("{\"index\":{}}\n{\"a\":1}\n{\"delete\":{}}\n")
	f.Add("{\"create\":{}}\n\n{\"update\":{}}\n{}\n")
	f.Fuzz(func(t *testing.T, body string) {
		r := NewReader(strings.NewReader(body))
		out, err := io.ReadAll(r)
		var se *SyntaxError
		if err != nil && !errors.As(err, &se) {
			t.Fatal(err)
		}
		if n := bytes.Count(out, []byte{'\n'}); n != len(r.Items()) {
			t.Fatalf("%d lines for %d items", n, len(r.Items()))
		}
	})
}

func BenchmarkReader(b *testing.B) {
	var body bytes.Buffer
	for i := range 2000 {
		body.WriteString(`{"create":{"_index":"filebeat-8"}}` + "\n")
		body.WriteString(`{"@timestamp":"2026-11-26T00:00:00.123Z","message":"GET /api/v1/users 200","host":{"name":"web-`)
		body.WriteString(string(rune('a' + i%26)))
		body.WriteString(`"},"log":{"level":"info"},"http":{"status":200,"bytes":1234}}` + "\n")
	}
	data := body.Bytes()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		r := NewReader(bytes.NewReader(data))
		if _, err := io.Copy(io.Discard, r); err != nil {
			b.Fatal(err)
		}
	}
}

// TestFastActionMatchesSlow: the fast path reads an action line as
// encoding/json does, or leaves it to the slow path.
func TestFastActionMatchesSlow(t *testing.T) {
	for _, line := range []string{
		`{"index":{"_index":"a","_id":"b"}}`, `{"create":{}}`, ` { "index" : { "_id" : 5 } } `,
		`{"index":{"_index":null}}`, `{"index":{"_index":"a\u0041","routing":{"x":1}}}`,
		`{"index":{}, "create":{}}`, `{"index":[]}`, `{"index":{"_id":"x"}`, `{"index":{"_id":"x"}}}`,
	} {
		var r Reader
		fast, ok := r.fastAction([]byte(line))
		slow, err := slowAction([]byte(line))
		if ok && (err != nil || fast != slow) {
			t.Errorf("%s: fast %+v, slow %+v %v", line, fast, slow, err)
		}
	}
}

// TestReaderRepeatedActions: an action line equal to the one before is
// not parsed again, and gives what parsing it gives, also after other
// lines, delete and update actions and documents.
func TestReaderRepeatedActions(t *testing.T) {
	actions := []string{`{"create":{"_index":"a"}}`, `{"create":{"_index":"a"}}`, `{"index":{"_index":"b","_id":"1"}}`,
		`{"index":{"_index":"b","_id":"2"}}`, `{"create":{"_index":"a"}}`, `{"delete":{"_id":"3"}}`, `{"delete":{"_id":"3"}}`,
		`{"update":{"_id":"4"}}`, `{ "create" : { "_index" : "a" } }`, `{"create":{"_index":"a"}}`, `{"create":{}}`, `{"create":{}}`}
	var body strings.Builder
	var want []Item
	for i, a := range actions {
		body.WriteString(a + "\n")
		it, err := slowAction([]byte(a))
		if err != nil {
			t.Fatal(err)
		}
		switch it.Op {
		case Delete:
			it.Err = "delete is not supported: logs are append-only"
		case Update:
			it.Err = "update is not supported: logs are append-only"
			body.WriteString(`{"doc":{}}` + "\n")
		default:
			fmt.Fprintf(&body, `{"i":%d}`+"\n", i)
		}
		want = append(want, it)
	}
	r := NewReader(strings.NewReader(body.String()))
	if _, err := io.ReadAll(r); err != nil {
		t.Fatal(err)
	}
	if got := r.Items(); !slices.Equal(got, want) {
		t.Fatalf("items\n%+v\nwant\n%+v", got, want)
	}
}

// TestReaderReset: a Reader reset for another body reads it as a new one
// does, output, items and errors, whatever the body before left.
func TestReaderReset(t *testing.T) {
	bodies := []string{
		"{\"create\":{\"_index\":\"a\"}}\n{\"x\":1}\n{\"create\":{\"_index\":\"a\"}}\n{\"x\":2}\n",
		"{\"index\":{\"_id\":\"7\"}}\n{\"y\":1}\n{\"delete\":{}}\n{\"create\":{\"_index\":\"a\"}}\n",
		"{\"create\":{\"_index\":\"a\"}}\n" + strings.Repeat("z", 100000) + "\n",
		"not an action\n{}\n",
		"{\"create\":{\"_index\":\"b\"}}\n{\"x\":3}",
		"",
	}
	var reused Reader
	for round := range 2 {
		for i, body := range bodies {
			fresh := NewReader(strings.NewReader(body))
			wantOut, wantErr := io.ReadAll(fresh)
			if reused.br == nil {
				reused = *NewReader(strings.NewReader(body))
			} else {
				reused.Reset(strings.NewReader(body))
			}
			gotOut, gotErr := io.ReadAll(&reused)
			if !bytes.Equal(gotOut, wantOut) || fmt.Sprint(gotErr) != fmt.Sprint(wantErr) ||
				!slices.Equal(reused.Items(), fresh.Items()) || fmt.Sprint(reused.Syntax()) != fmt.Sprint(fresh.Syntax()) {
				t.Fatalf("round %d body %d: reset reader gave %q %v %+v, a new one %q %v %+v",
					round, i, gotOut, gotErr, reused.Items(), wantOut, wantErr, fresh.Items())
			}
		}
	}
}

// readChunks reads r through a buffer of n bytes, as the pipeline reads
// it through its chunk buffers.
func readChunks(r io.Reader, n int) ([]byte, error) {
	var out []byte
	buf := make([]byte, n)
	for {
		m, err := r.Read(buf)
		out = append(out, buf[:m]...)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
	}
}

// sameAsSlow fails t unless body reads the same with and without the fast
// path (output, items, error), through buffers of n bytes, also after a
// Reset from before.
func sameAsSlow(t *testing.T, prev, body string, n int) {
	t.Helper()
	fast := NewReader(strings.NewReader(prev))
	readChunks(fast, n)
	fast.Reset(strings.NewReader(body))
	slow := NewReader(strings.NewReader(body))
	slow.slowOnly = true
	gotOut, gotErr := readChunks(fast, n)
	wantOut, wantErr := readChunks(slow, n)
	if !bytes.Equal(gotOut, wantOut) || fmt.Sprint(gotErr) != fmt.Sprint(wantErr) || !slices.Equal(fast.Items(), slow.Items()) {
		t.Fatalf("after %q, %q through %d bytes: fast %q %v %+v; slow %q %v %+v", prev, body, n, gotOut, gotErr, fast.Items(), wantOut, wantErr, slow.Items())
	}
}

// TestReaderFast: the fast path reads every body as step alone does.
func TestReaderFast(t *testing.T) {
	pieces := []string{`{"create":{"_index":"a"}}` + "\n", `{"create":{}}` + "\n", `{"index":{}}` + "\n", `{"delete":{}}` + "\n",
		`{"update":{}}` + "\n", "\n", " \n", `{"x":1}` + "\n", `{"y":"` + strings.Repeat("y", 70000) + `"}` + "\n",
		` {"z":1}` + "\n", "[1]\n", `{"create":{}}`, `{"w":2}`, `{"create":{}}{"v":3}` + "\n", "\r\n"}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 3000 {
		var b strings.Builder
		for range rng.IntN(30) {
			if rng.IntN(3) > 0 { // mostly action and document pairs
				b.WriteString(pieces[rng.IntN(3)])
				b.WriteString(pieces[7])
				continue
			}
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		prev := []string{"", `{"create":{}}`, "{\"create\":{}}\n{\"a\":1}\n"}[rng.IntN(3)]
		sameAsSlow(t, prev, b.String(), []int{1, 7, 64, 4096, 1 << 20}[rng.IntN(5)])
	}
}

func FuzzReaderFast(f *testing.F) {
	f.Add("", "{\"create\":{}}\n{\"a\":1}\n{\"create\":{}}\n{\"b\":2}\n", 5)
	f.Add(`{"create":{}}`, "{\"create\":{}}{\"a\":1}\n", 64)
	f.Fuzz(func(t *testing.T, prev, body string, n int) {
		sameAsSlow(t, prev, body, 1+min(max(n, 0), 1<<16))
	})
}
