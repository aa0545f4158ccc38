package cli

import (
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"
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

// requireSameRows fails unless a and b (sorted by sortRows) hold n rows
// each and the same rows, naming the first that differs.
func requireSameRows(t *testing.T, nameA string, a []map[string]string, nameB string, b []map[string]string, n int) {
	t.Helper()
	if len(a) != n || len(b) != n {
		t.Fatalf("%s stored %d rows, %s %d, want %d", nameA, len(a), nameB, len(b), n)
	}
	for i := range a {
		if !reflect.DeepEqual(a[i], b[i]) {
			t.Fatalf("row %d:\n%-12s %v\n%-12s %v", i, nameA, a[i], nameB, b[i])
		}
	}
}

// victoriaLogsRows starts VictoriaLogs (SPATE_VICTORIALOGS), lets feed
// send it the shipper's traffic, and returns its rows sorted by sortRows;
// ok is false, logged, when SPATE_VICTORIALOGS is unset.
func victoriaLogsRows(t *testing.T, feed func(base string)) (rows []map[string]string, ok bool) {
	t.Helper()
	bin := os.Getenv("SPATE_VICTORIALOGS")
	if bin == "" {
		t.Log("SPATE_VICTORIALOGS unset: not compared with VictoriaLogs")
		return nil, false
	}
	vl := startVictoriaLogs(t, bin)
	feed(vl)
	forceFlush(t, vl)
	rows = vlQuery(t, vl, "*", "0", "0")
	sortRows(rows)
	return rows, true
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
	if vr, ok := victoriaLogsRows(t, func(vl string) {
		runShipper(t, py, &res, append([]string{script, vl + "/insert/elasticsearch", "1200"}, params...)...)
	}); ok {
		requireSameRows(t, "VictoriaLogs", vr, "spate", sp, n)
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
	requireSameRows(t, "protobuf", sp, "JSON", sj, n)
	var r map[string]string
	for _, row := range sp {
		if row["_msg"] == "order 1 placed" {
			r = row
		}
	}
	if r["service.name"] != "checkout" || r["trace_id"] != "5b8efff798038103d269b633813fc60d" || r["order.id"] != "1" || r["severity_text"] != "Warn" {
		t.Errorf("row 1: %v", r)
	}
	if vr, ok := victoriaLogsRows(t, func(vl string) {
		runShipper(t, py, &res, script, vl+"/insert/opentelemetry/v1/logs", "300")
	}); ok {
		requireSameRows(t, "VictoriaLogs", vr, "spate", sp, n)
	}
}

// freeAddr returns a loopback address with a port free for tcp (and, by
// chance rather than guarantee, udp) at the time of the call.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// waitRows polls a server until the query returns n rows, or fails.
func waitRows(t *testing.T, u, q string, n int, flush func()) []map[string]string {
	t.Helper()
	var rows []map[string]string
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if flush != nil {
			flush()
		}
		if rows = vlQuery(t, u, q, "0", "0"); len(rows) >= n {
			return rows
		}
	}
	t.Fatalf("%s: %d rows of %d after 20 s: %v", u, len(rows), n, rows)
	return nil
}

// sendSyslog runs util-linux logger and syslog-ng (when installed) against
// a server's syslog listeners: logger over TCP with octet counting, over
// TCP with newline framing and over UDP in RFC 3164; syslog-ng forwarding a
// file over TCP in RFC 5424 (syslog() driver, octet counting) and over UDP
// in RFC 3164 (network() driver). It returns how many messages it sent.
func sendSyslog(t *testing.T, addr string) int {
	t.Helper()
	host, port, _ := net.SplitHostPort(addr)
	n := 0
	for _, args := range [][]string{
		{"--tcp", "--rfc5424", "--octet-count", "-t", "octet", "-p", "local3.err", "--sd-id", "meta@32473", "--sd-param", `env="prod"`, "payment failed"},
		{"--tcp", "--rfc5424", "-t", "newline", "-i", "-p", "user.info", "user logged in"},
		{"--udp", "--rfc3164", "-t", "udp3164", "-p", "daemon.warning", "disk almost full"},
	} {
		cmd := exec.Command("logger", append([]string{"-n", host, "-P", port}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("logger %v: %v: %s", args, err, out)
		}
		n++
	}
	sng, err := exec.LookPath("syslog-ng")
	if err != nil {
		if _, err = os.Stat("/usr/sbin/syslog-ng"); err != nil {
			t.Log("syslog-ng not installed: only logger was used")
			return n
		}
		sng = "/usr/sbin/syslog-ng"
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "in.log")
	if err := os.WriteFile(in, []byte("forwarded line one\nforwarded line two\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	conf := fmt.Sprintf(`@version: 3.38
options { keep-hostname(yes); };
source s_in { file(%q follow-freq(0.1) program-override("fileapp") flags(no-parse)); };
destination d_tcp { syslog(%q transport("tcp") port(%s)); };
destination d_udp { network(%q transport("udp") port(%s)); };
log { source(s_in); destination(d_tcp); destination(d_udp); };
`, in, host, port, host, port)
	confPath := filepath.Join(dir, "syslog-ng.conf")
	os.WriteFile(confPath, []byte(conf), 0o644)
	cmd := exec.Command(sng, "-F", "--no-caps", "-f", confPath, "-R", filepath.Join(dir, "persist"), "-p", filepath.Join(dir, "pid"), "-c", filepath.Join(dir, "ctl"))
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
	})
	return n + 4 // two lines, each over TCP and UDP
}

// TestShipperSyslog sends syslog with the real clients (logger, and
// syslog-ng when installed) to spate serve --syslog-tcp --syslog-udp, and,
// with SPATE_VICTORIALOGS, the same to VictoriaLogs v1.52.1's syslog
// listeners: both must store the same rows, but for their times (each
// client stamps the time it sends).
func TestShipperSyslog(t *testing.T) {
	if _, err := exec.LookPath("logger"); err != nil {
		t.Skip("logger (util-linux) not installed")
	}
	t.Setenv(mainEnv, "1")
	addr := freeAddr(t)
	srv := startServe(t, t.TempDir(), "--syslog-tcp", addr, "--syslog-udp", addr, "--syslog-tz", "UTC")
	n := sendSyslog(t, addr)
	sp := waitRows(t, srv.url, "*", n, nil)
	byApp := map[string]map[string]string{}
	for _, r := range sp {
		byApp[r["app_name"]+"/"+r["format"]+"/"+strings.TrimSpace(r["_msg"])] = r // syslog-ng keeps the line end in octet-counted frames
	}
	if r := byApp["octet/rfc5424/payment failed"]; r["facility_keyword"] != "local3" || r["level"] != "error" || r["meta@32473.env"] != "prod" || r["_stream"] == "" {
		t.Errorf("octet-counted: %v", r)
	}
	if r := byApp["newline/rfc5424/user logged in"]; r["proc_id"] == "" || r["proc_id"] == "-" || r["severity"] != "6" {
		t.Errorf("newline: %v", r)
	}
	if r := byApp["udp3164/rfc3164/disk almost full"]; r["facility_keyword"] != "daemon" || r["level"] != "warning" {
		t.Errorf("udp: %v", r)
	}
	if n > 3 {
		for _, k := range []string{"fileapp/rfc5424/forwarded line one", "fileapp/rfc3164/forwarded line two"} {
			if byApp[k] == nil {
				t.Errorf("syslog-ng: no row %s in %v", k, sp)
			}
		}
	}
	vlBin := os.Getenv("SPATE_VICTORIALOGS")
	if vlBin == "" {
		t.Log("SPATE_VICTORIALOGS unset: not compared with VictoriaLogs")
		return
	}
	vlAddr := freeAddr(t)
	vl := startVictoriaLogsArgs(t, vlBin, "-syslog.listenAddr.tcp="+vlAddr, "-syslog.listenAddr.udp="+vlAddr, "-syslog.timezone=UTC")
	sendSyslog(t, vlAddr)
	vr := waitRows(t, vl, "*", n, func() { forceFlush(t, vl) })
	key := func(r map[string]string) string {
		c := maps.Clone(r)
		delete(c, "_time")
		delete(c, "_stream_id") // differs when proc_id (logger's pid) does
		for _, k := range []string{"proc_id", "timeQuality.isSynced", "timeQuality.syncAccuracy"} {
			if c[k] != "" {
				c[k] = "x"
			}
		}
		s := c["_stream"]
		if i := strings.Index(s, "proc_id="); i >= 0 {
			j := strings.IndexByte(s[i:], '"')
			k := strings.IndexByte(s[i+j+1:], '"')
			c["_stream"] = s[:i] + "proc_id=x" + s[i+j+1+k+1:]
		}
		b, _ := json.Marshal(c)
		return string(b)
	}
	var ks, kv []string
	for _, r := range sp {
		ks = append(ks, key(r))
	}
	for _, r := range vr {
		kv = append(kv, key(r))
	}
	sort.Strings(ks)
	sort.Strings(kv)
	if !reflect.DeepEqual(ks, kv) {
		t.Fatalf("rows differ:\nVictoriaLogs %s\nspate        %s", strings.Join(kv, "\n             "), strings.Join(ks, "\n             "))
	}
}

// TestShipperLoki pushes entries built with the Loki push API's protobuf
// definitions (scripts/shippers/loki_push.proto, compiled by grpcio-tools'
// protoc) and snappy, as Promtail sends them, and the same entries in
// JSON, to spate serve: both give the same rows. With SPATE_VICTORIALOGS,
// VictoriaLogs v1.52.1 gets the same protobuf push, and its rows must be
// spate's.
func TestShipperLoki(t *testing.T) {
	py := shipperPython(t)
	t.Setenv(mainEnv, "1")
	script := shipperScript(t, "loki_push.py")
	const n = 200
	var res struct{ Status int }
	pb := startServe(t, t.TempDir())
	runShipper(t, py, &res, script, pb.url+"/insert/loki/api/v1/push", "200")
	if res.Status != 204 {
		t.Fatalf("protobuf push: %d", res.Status)
	}
	js := startServe(t, t.TempDir())
	runShipper(t, py, &res, script, js.url+"/insert/loki/api/v1/push", "200", "--json")
	sp := vlQuery(t, pb.url, "*", "0", "0")
	sortRows(sp)
	sj := vlQuery(t, js.url, "*", "0", "0")
	sortRows(sj)
	requireSameRows(t, "protobuf", sp, "JSON", sj, n)
	if vr, ok := victoriaLogsRows(t, func(vl string) {
		runShipper(t, py, &res, script, vl+"/insert/loki/api/v1/push", "200")
	}); ok {
		requireSameRows(t, "VictoriaLogs", vr, "spate", sp, n)
	}
}
