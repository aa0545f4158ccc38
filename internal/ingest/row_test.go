package ingest

import (
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/spate-io/spate/internal/segment"
)

func TestRowWriter(t *testing.T) {
	w := RowWriter{Tenant: segment.Tenant{AccountID: 1, ProjectID: 2}}
	r := Row{Time: 1764115200123000000, Stream: 2, Fields: []Field{
		{"job", "api"}, {"env", ""}, {"_msg", "hello \"x\"\n"}, {"empty", ""}, {"_stream", "no"}, {"n", "5"},
	}}
	line := string(w.Append(nil, &r))
	want := `{"_time":"2025-11-26T00:00:00.123Z","_stream":"{job=\"api\"}","_stream_id":"`
	if !strings.HasPrefix(line, want) || !strings.HasSuffix(line, `","job":"api","_msg":"hello \"x\"\n","n":"5"}`+"\n") {
		t.Fatalf("%s", line)
	}
	// The _stream_id is the one a line with the same stream gets from
	// Processor.
	pr := NewProcessor(Params{StreamFields: []string{"job"}}, w.Tenant)
	pr.Process([]byte(`{"_time":"2025-11-26T00:00:00.123Z","job":"api"}`), 0)
	var got map[string]string
	if err := json.Unmarshal([]byte(line), &got); err != nil {
		t.Fatal(err)
	}
	if got["_stream"] != string(pr.Stream()) {
		t.Errorf("stream %q, processor %q", got["_stream"], pr.Stream())
	}
	// No stream of its own, no time.
	line = string(w.Append(nil, &Row{Stream: -1, Fields: []Field{{"a", "b"}}}))
	if line != `{"a":"b"}`+"\n" {
		t.Errorf("%s", line)
	}
	line = string(w.Append(nil, &Row{Stream: 0, Fields: []Field{{"a", "b"}}}))
	if !strings.HasPrefix(line, `{"_stream":"{}","_stream_id":"`) {
		t.Errorf("%s", line)
	}
}

func TestRowReader(t *testing.T) {
	rr := RowReader(segment.Tenant{}, func(emit func(*Row) error) error {
		for i := range 10000 {
			if err := emit(&Row{Stream: -1, Fields: []Field{{"i", strings.Repeat("x", i%100)}}}); err != nil {
				return err
			}
		}
		return nil
	})
	data, err := io.ReadAll(rr)
	if err != nil || strings.Count(string(data), "\n") != 10000 {
		t.Fatalf("%v %d", err, strings.Count(string(data), "\n"))
	}
	rr.Close()
	// Closing early stops the decoder.
	stopped := make(chan error, 1)
	rr = RowReader(segment.Tenant{}, func(emit func(*Row) error) error {
		for {
			if err := emit(&Row{Stream: -1, Fields: []Field{{"a", "b"}}}); err != nil {
				stopped <- err
				return err
			}
		}
	})
	rr.Read(make([]byte, 10))
	rr.Close()
	if err := <-stopped; err == nil {
		t.Fatal("decoder not stopped")
	}
}
