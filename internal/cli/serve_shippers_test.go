package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"sort"
	"testing"
)

// shipperPython returns the Python with the shippers' clients installed
// (SPATE_SHIPPER_PYTHON; .ci/run installs the pinned elasticsearch and
// OpenTelemetry packages), or skips.
func shipperPython(t *testing.T) string {
	py := os.Getenv("SPATE_SHIPPER_PYTHON")
	if py == "" {
		t.Skip("SPATE_SHIPPER_PYTHON unset: no Python with the shippers' clients")
	}
	return py
}

// shipperScript returns the path of scripts/shippers/name.
func shipperScript(t *testing.T, name string) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "scripts", "shippers", name)
}

// runShipper runs a client script and decodes the JSON it prints.
func runShipper(t *testing.T, py string, out any, args ...string) {
	t.Helper()
	cmd := exec.Command(py, args...)
	b, err := cmd.Output()
	if err != nil {
		stderr := ""
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("%v: %v\n%s", args, err, stderr)
	}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatalf("%v: %v: %s", args, err, b)
	}
}

// sortRows orders query rows by _time, then _msg.
func sortRows(rows []map[string]string) {
	sort.Slice(rows, func(i, j int) bool {
		if rows[i]["_time"] != rows[j]["_time"] {
			return rows[i]["_time"] < rows[j]["_time"]
		}
		return rows[i]["_msg"] < rows[j]["_msg"]
	})
}

// TestShipperElasticsearch sends documents with the official Elasticsearch
// Python client (helpers.bulk, 8.x: PUT /_bulk with its versioned
// Content-Type, refusing answers without X-Elastic-Product) to spate
// serve: bad items are reported item by item and the good ones stored.
// With SPATE_VICTORIALOGS, the same client feeds VictoriaLogs v1.52.1 the
// same good documents, and both servers must return the same rows.
func TestShipperElasticsearch(t *testing.T) {
	py := shipperPython(t)
	t.Setenv(mainEnv, "1")
	script := shipperScript(t, "es_bulk.py")
	params := []string{"--header", "VL-Msg-Field=message", "--header", "VL-Time-Field=@timestamp"}
	srv := startServe(t, t.TempDir())
	var res struct {
		OK     int
		Errors []map[string]struct {
			Status int
			Error  struct{ Type, Reason string }
		}
	}
	const n = 1200
	runShipper(t, py, &res, append([]string{script, srv.url + "/insert/elasticsearch", "1200", "--bad"}, params...)...)
	if res.OK != n || len(res.Errors) != 2 {
		t.Fatalf("ok %d, errors %+v", res.OK, res.Errors)
	}
	for _, e := range res.Errors {
		for op, it := range e {
			if it.Status != 400 || it.Error.Reason == "" || (op != "create" && op != "delete") {
				t.Errorf("%s: %+v", op, it)
			}
		}
	}
	sp := vlQuery(t, srv.url, "*", "0", "0")
	if len(sp) != n {
		t.Fatalf("spate stored %d rows, want %d", len(sp), n)
	}
	sortRows(sp)
	if r := sp[0]; r["_msg"] != "request 0 served in 0 ms" || r["service.name"] != "api" || r["http.status"] != "200" || r["_time"] != "2026-11-26T10:00:00Z" {
		t.Errorf("first row: %v", r)
	}
	vlBin := os.Getenv("SPATE_VICTORIALOGS")
	if vlBin == "" {
		t.Log("SPATE_VICTORIALOGS unset: not compared with VictoriaLogs")
		return
	}
	vl := startVictoriaLogs(t, vlBin)
	runShipper(t, py, &res, append([]string{script, vl + "/insert/elasticsearch", "1200"}, params...)...)
	forceFlush(t, vl)
	vr := vlQuery(t, vl, "*", "0", "0")
	sortRows(vr)
	if len(vr) != n {
		t.Fatalf("VictoriaLogs stored %d rows", len(vr))
	}
	for i := range vr {
		if !reflect.DeepEqual(vr[i], sp[i]) {
			t.Fatalf("row %d:\nVictoriaLogs %v\nspate        %v", i, vr[i], sp[i])
		}
	}
}

// TestShipperOTLP emits records with the OpenTelemetry Python SDK to
// spate serve, once through its OTLP/HTTP exporter (protobuf) and once in
// the OTLP JSON encoding, and checks that both give the same rows. With
// SPATE_VICTORIALOGS, the exporter feeds VictoriaLogs v1.52.1 the same
// records (it takes protobuf only), and its rows must be spate's.
func TestShipperOTLP(t *testing.T) {
	py := shipperPython(t)
	t.Setenv(mainEnv, "1")
	script := shipperScript(t, "otlp_logs.py")
	const n = 300
	var res struct{ Records int }
	pb := startServe(t, t.TempDir())
	runShipper(t, py, &res, script, pb.url+"/insert/opentelemetry/v1/logs", "300")
	js := startServe(t, t.TempDir())
	runShipper(t, py, &res, script, js.url+"/insert/opentelemetry/v1/logs", "300", "--json")
	sp := vlQuery(t, pb.url, "*", "0", "0")
	sortRows(sp)
	sj := vlQuery(t, js.url, "*", "0", "0")
	sortRows(sj)
	if len(sp) != n || len(sj) != n {
		t.Fatalf("stored %d rows from protobuf, %d from JSON, want %d", len(sp), len(sj), n)
	}
	for i := range sp {
		if !reflect.DeepEqual(sp[i], sj[i]) {
			t.Fatalf("row %d:\nprotobuf %v\nJSON     %v", i, sp[i], sj[i])
		}
	}
	var r map[string]string
	for _, row := range sp {
		if row["_msg"] == "order 1 placed" {
			r = row
		}
	}
	if r["service.name"] != "checkout" || r["trace_id"] != "5b8efff798038103d269b633813fc60d" || r["order.id"] != "1" || r["severity_text"] != "Warn" {
		t.Errorf("row 1: %v", r)
	}
	vlBin := os.Getenv("SPATE_VICTORIALOGS")
	if vlBin == "" {
		t.Log("SPATE_VICTORIALOGS unset: not compared with VictoriaLogs")
		return
	}
	vl := startVictoriaLogs(t, vlBin)
	runShipper(t, py, &res, script, vl+"/insert/opentelemetry/v1/logs", "300")
	forceFlush(t, vl)
	vr := vlQuery(t, vl, "*", "0", "0")
	sortRows(vr)
	if len(vr) != n {
		t.Fatalf("VictoriaLogs stored %d rows", len(vr))
	}
	for i := range vr {
		if !reflect.DeepEqual(vr[i], sp[i]) {
			t.Fatalf("row %d:\nVictoriaLogs %v\nspate        %v", i, vr[i], sp[i])
		}
	}
}
