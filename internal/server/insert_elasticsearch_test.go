package server

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

type esItem struct {
	Index  string `json:"_index"`
	ID     string `json:"_id"`
	Status int    `json:"status"`
	Result string `json:"result"`
	Error  struct {
		Type   string `json:"type"`
		Reason string `json:"reason"`
	} `json:"error"`
}

type esResponse struct {
	Errors bool                `json:"errors"`
	Items  []map[string]esItem `json:"items"`
	Error  struct {
		Type, Reason string
	} `json:"error"`
	Status int `json:"status"`
}

func esPost(t *testing.T, url, body string, hdr ...string) (int, http.Header, esResponse) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPut, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if len(hdr) == 0 {
		hdr = []string{"Content-Type", "application/vnd.elasticsearch+x-ndjson; compatible-with=8"}
	}
	resp := do(t, req, hdr...)
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var r esResponse
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatalf("answer is not JSON: %v: %s", err, data)
	}
	if resp.Header.Get("X-Elastic-Product") != "Elasticsearch" {
		t.Errorf("no X-Elastic-Product header: %v", resp.Header)
	}
	return resp.StatusCode, resp.Header, r
}

// TestElasticsearchBulk: good items are stored and answered 201, bad ones
// get their own errors in their own places, and nothing else is lost.
func TestElasticsearchBulk(t *testing.T) {
	s, ts := newTestServer(t, Config{})
	body := `{"index":{"_index":"app","_id":"1"}}
{"@timestamp":"2026-11-22T09:00:00Z","message":"one","host":{"name":"a"}}
{"create":{}}
not json
{"delete":{"_id":"1"}}
{"create":{"_index":"app"}}
{"@timestamp":"2026-11-22T09:00:01Z","message":"two"}
{"index":{}}
{"_time":"yesterday","message":"bad time"}
{"update":{"_id":"1"}}
{"doc":{}}
{"create":{}}
{"@timestamp":"2026-11-22T09:00:02Z","message":"three"}
`
	code, _, r := esPost(t, ts.URL+"/insert/elasticsearch/_bulk", body)
	if code != 200 || !r.Errors || len(r.Items) != 7 {
		t.Fatalf("%d %+v", code, r)
	}
	want := []struct {
		op     string
		status int
	}{{"index", 201}, {"create", 400}, {"delete", 400}, {"create", 201}, {"index", 400}, {"update", 400}, {"create", 201}}
	for i, w := range want {
		it, ok := r.Items[i][w.op]
		if !ok || it.Status != w.status {
			t.Errorf("item %d: %+v, want %s %d", i, r.Items[i], w.op, w.status)
		}
		if w.status == 400 && it.Error.Reason == "" {
			t.Errorf("item %d: no reason: %+v", i, it)
		}
	}
	if it := r.Items[0]["index"]; it.Index != "app" || it.ID != "1" || it.Result != "created" {
		t.Errorf("%+v", it)
	}
	lines := storedLines(t, s)
	if len(lines) != 3 {
		t.Fatalf("stored %d lines: %q", len(lines), lines)
	}
	for i, m := range []string{"one", "two", "three"} {
		if !strings.Contains(lines[i], `"message":"`+m+`"`) {
			t.Errorf("line %d: %s", i, lines[i])
		}
	}
}

func TestElasticsearchBulkGzipAndIndexPath(t *testing.T) {
	s, ts := newTestServer(t, Config{})
	var body bytes.Buffer
	for i := range 500 {
		body.WriteString(`{"create":{}}` + "\n")
		body.WriteString(`{"message":"m` + strings.Repeat("x", i%7) + `"}` + "\n")
	}
	req, _ := http.NewRequest(http.MethodPost, ts.URL+"/insert/elasticsearch/logs-app/_bulk", bytes.NewReader(gz(body.Bytes())))
	resp := do(t, req, "Content-Type", "application/x-ndjson", "Content-Encoding", "gzip")
	defer resp.Body.Close()
	var r esResponse
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil || resp.StatusCode != 200 || r.Errors || len(r.Items) != 500 {
		t.Fatalf("%d %v %v %d", resp.StatusCode, err, r.Errors, len(r.Items))
	}
	if r.Items[0]["create"].Index != "logs-app" {
		t.Errorf("%+v", r.Items[0])
	}
	if n := len(storedLines(t, s)); n != 500 {
		t.Fatalf("stored %d", n)
	}
}

func TestElasticsearchBulkWhole(t *testing.T) {
	_, ts := newTestServer(t, Config{MaxRequestBytes: 1000})
	// A malformed action line: the whole request fails, saying so.
	code, _, r := esPost(t, ts.URL+"/insert/elasticsearch/_bulk", "{\"index\":{}}\n{\"a\":1}\nnot an action\n{\"b\":2}\n")
	if code != 400 || r.Status != 400 || !strings.Contains(r.Error.Reason, "malformed action/metadata line [3]") {
		t.Errorf("%d %+v", code, r)
	}
	code, _, r = esPost(t, ts.URL+"/insert/elasticsearch/_bulk", "")
	if code != 400 || r.Error.Type == "" {
		t.Errorf("empty: %d %+v", code, r)
	}
	code, _, r = esPost(t, ts.URL+"/insert/elasticsearch/_bulk", strings.Repeat("{\"create\":{}}\n{\"a\":1}\n", 100))
	if code != 413 || r.Error.Type != "content_too_long_exception" {
		t.Errorf("too large: %d %+v", code, r)
	}
	// The Content-Type is not checked, as in VictoriaLogs: the body is.
	code, _, r = esPost(t, ts.URL+"/insert/elasticsearch/_bulk", "{\"create\":{}}\n{\"a\":1}\n", "Content-Type", "image/png")
	if code != 200 || r.Errors {
		t.Errorf("content type: %d %+v", code, r)
	}
}

func TestElasticsearchProbes(t *testing.T) {
	_, ts := newTestServer(t, Config{})
	for _, c := range []struct{ method, path, want string }{
		{"GET", "/insert/elasticsearch/", `"number":"8.9.0"`},
		{"GET", "/insert/elasticsearch", `"number":"8.9.0"`},
		{"HEAD", "/insert/elasticsearch/", ""},
		{"GET", "/insert/elasticsearch/_license", `"status":"active"`},
		{"PUT", "/insert/elasticsearch/_index_template/filebeat-8", "{}"},
		{"GET", "/insert/elasticsearch/_ilm/policy/filebeat", "{}"},
		{"GET", "/insert/elasticsearch/_nodes/http", "{}"},
	} {
		req, _ := http.NewRequest(c.method, ts.URL+c.path, nil)
		resp := do(t, req)
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(data), c.want) || resp.Header.Get("X-Elastic-Product") != "Elasticsearch" {
			t.Errorf("%s %s: %d %s %v", c.method, c.path, resp.StatusCode, data, resp.Header)
		}
	}
	req, _ := http.NewRequest("GET", ts.URL+"/insert/elasticsearch/_search", nil)
	resp := do(t, req)
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Errorf("_search: %d", resp.StatusCode)
	}
}
