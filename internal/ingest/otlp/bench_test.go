package otlp

import (
	"fmt"
	"testing"

	"github.com/spate-io/spate/internal/ingest"
)

// benchRequest is a realistic request: one resource with 3 attributes, one
// scope, n records of a ~100-byte message, 5 attributes, severity, trace
// and span ids.
func benchRequest(n int) pb {
	var lrs []pb
	trace := []byte("0123456789abcdef")
	span := []byte("01234567")
	for i := range n {
		lrs = append(lrs, rec(uint64(1700000000000000000+i),
			sv(fmt.Sprintf("GET /api/v1/users/%d/orders?limit=50 HTTP/1.1 200 1532 \"Mozilla/5.0 (X11; Linux x86_64)\" %dms", i, i%300)),
			kv("http.method", sv("GET")),
			kv("http.status_code", iv(200)),
			kv("http.route", sv("/api/v1/users/{id}/orders")),
			kv("duration", dv(float64(i%300)/7)),
			kv("user.id", sv(fmt.Sprintf("u-%06d", i))),
		).varint(2, 9).str(3, "INFO").bytes(9, trace).bytes(10, span))
	}
	return request(resourceLogs(attrs(1, kv("service.name", sv("checkout")), kv("host.name", sv("node-17.prod")),
		kv("k8s.pod.name", sv("checkout-7d9f8b6c5-x2x9z"))),
		scopeLogs(pb(nil).str(1, "go.opentelemetry.io/contrib/bridges/otelslog").str(2, "0.9.0"), lrs...)))
}

// BenchmarkDecodeProtobuf is a request's whole decoding: the check, then
// the rows.
func BenchmarkDecodeProtobuf(b *testing.B) {
	body := benchRequest(1000)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	fields := 0
	for b.Loop() {
		req, err := DecodeProtobuf(body)
		if err != nil {
			b.Fatal(err)
		}
		if err := req.Rows(func(r *ingest.Row) error {
			fields += len(r.Fields)
			return nil
		}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*1000), "ns/record")
}

// BenchmarkDecodeUnchecked is the rows of a request not checked first
// (Unchecked): what spate serve does for a request whose rows fit in the
// chunks it holds back.
func BenchmarkDecodeUnchecked(b *testing.B) {
	body := benchRequest(1000)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	fields := 0
	for b.Loop() {
		if err := Unchecked(body).Rows(func(r *ingest.Row) error {
			fields += len(r.Fields)
			return nil
		}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*1000), "ns/record")
}

func BenchmarkCheckProtobuf(b *testing.B) {
	body := benchRequest(1000)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeProtobuf(body); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeJSON(b *testing.B) {
	req, err := DecodeProtobuf(benchRequest(1000))
	if err != nil {
		b.Fatal(err)
	}
	body := appendTestJSON(nil, req)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		req, err := DecodeJSON(body)
		if err != nil {
			b.Fatal(err)
		}
		if err := req.Rows(func(*ingest.Row) error { return nil }); err != nil {
			b.Fatal(err)
		}
	}
}

// appendTestJSON writes benchRequest's shape as OTLP/JSON (from its rows:
// enough for the benchmark).
func appendTestJSON(dst []byte, req *Request) []byte {
	dst = append(dst, `{"resourceLogs":[{"resource":{"attributes":[`...)
	dst = append(dst, `{"key":"service.name","value":{"stringValue":"checkout"}},{"key":"host.name","value":{"stringValue":"node-17.prod"}},`...)
	dst = append(dst, `{"key":"k8s.pod.name","value":{"stringValue":"checkout-7d9f8b6c5-x2x9z"}}]},"scopeLogs":[{"scope":{"name":"go.opentelemetry.io/contrib/bridges/otelslog","version":"0.9.0"},"logRecords":[`...)
	i := 0
	req.Rows(func(r *ingest.Row) error {
		if i > 0 {
			dst = append(dst, ',')
		}
		i++
		f := func(name string) string {
			for _, x := range r.Fields {
				if x.Name == name {
					return x.Value
				}
			}
			return ""
		}
		dst = fmt.Appendf(dst, `{"timeUnixNano":"%d","severityNumber":9,"severityText":"INFO","body":{"stringValue":%q},`, r.Time, f("_msg"))
		dst = fmt.Appendf(dst, `"attributes":[{"key":"http.method","value":{"stringValue":"GET"}},{"key":"http.status_code","value":{"intValue":"200"}},`)
		dst = fmt.Appendf(dst, `{"key":"http.route","value":{"stringValue":"/api/v1/users/{id}/orders"}},{"key":"duration","value":{"doubleValue":%s}},`, f("duration"))
		dst = fmt.Appendf(dst, `{"key":"user.id","value":{"stringValue":%q}}],"traceId":"%s","spanId":"%s"}`, f("user.id"), f("trace_id"), f("span_id"))
		return nil
	})
	return append(dst, "]}]}]}"...)
}

func TestBenchJSONEquivalent(t *testing.T) {
	req, err := DecodeProtobuf(benchRequest(20))
	if err != nil {
		t.Fatal(err)
	}
	checkRows(t, decodeJSONRows(t, string(appendTestJSON(nil, req))), rowsOf(t, req)...)
}
