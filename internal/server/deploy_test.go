package server

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDeployMetrics: every metric the Grafana dashboard and the alert
// rules in deploy/ name is one spate serve exports at /metrics, and the
// dashboard is valid JSON. (CI also runs promtool check rules.)
func TestDeployMetrics(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("x"), 0o644)
	_, ts := newTestServer(t, Config{FilesDir: dir})
	// One request of each kind, so that labelled series exist.
	post(t, ts.URL+"/insert/jsonline", []byte(`{"msg":"m"}`+"\n"))
	for _, p := range []string{"/files/a.txt", "/select/logsql/query?query=*"} {
		resp, err := http.Get(ts.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	resp, err := http.Get(ts.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	exported := map[string]bool{}
	for line := range strings.SplitSeq(string(b), "\n") {
		if name, ok := strings.CutPrefix(line, "# TYPE "); ok {
			f := strings.Fields(name)
			exported[f[0]] = true
			if f[1] == "histogram" || f[1] == "summary" {
				for _, s := range []string{"_bucket", "_sum", "_count"} {
					exported[f[0]+s] = true
				}
			}
		}
	}
	name := regexp.MustCompile(`\b((?:spate|process|go)_[a-z0-9_]+)`)
	root := filepath.Join("..", "..", "deploy")
	files := []string{filepath.Join(root, "prometheus", "spate-rules.yml"), filepath.Join(root, "grafana", "spate.json")}
	seen := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(f, ".json") {
			var v any
			if err := json.Unmarshal(data, &v); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
		}
		for _, m := range name.FindAllStringSubmatch(string(data), -1) {
			seen++
			if !exported[m[1]] {
				t.Errorf("%s names %s, which /metrics does not export", f, m[1])
			}
		}
	}
	if seen < 30 {
		t.Fatalf("only %d metric references found: a test of nothing", seen)
	}
}
