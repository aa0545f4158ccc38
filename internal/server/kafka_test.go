package server

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/spate-io/spate/internal/kafka"
)

// TestKafkaGateway: a server with Kafka and no data directory checks the
// lines of every protocol as always and produces the good ones, answering
// once Kafka has them; /readyz follows the cluster; it has no query API.
func TestKafkaGateway(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, "logs"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	p, err := kafka.NewProducer(kafka.Config{Brokers: c.ListenAddrs(), Topic: "logs", DeliveryTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Kafka: p, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	defer func() { ts.Close(); s.Close() }()

	r := post(t, ts.URL+"/insert/jsonline?_stream_fields=app", []byte(`{"app":"a","_msg":"one"}`+"\n"+`not json`+"\n"+`{"app":"b","_msg":"two"}`+"\n"))
	if r.code != 200 || r.rep.Accepted != 2 || r.rep.Rejected != 1 {
		t.Fatalf("%d %+v", r.code, r.rep)
	}
	code, _, r2 := esPost(t, ts.URL+"/insert/elasticsearch/_bulk", "{\"create\":{}}\n{\"_msg\":\"three\"}\n")
	if code != 200 || r2.Errors {
		t.Fatalf("bulk: %d %+v", code, r2)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.ConsumeTopics("logs"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var got []string
	for len(got) < 3 && ctx.Err() == nil {
		cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) { got = append(got, string(r.Key)+" "+string(r.Value)) })
	}
	all := strings.Join(got, "\n")
	if len(got) != 3 || !strings.Contains(all, `{app="a"} {"_time":`) || !strings.Contains(all, `"_msg":"three"`) {
		t.Fatalf("records:\n%s", all)
	}
	get := func(path string) int {
		resp, err := http.Get(ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := get("/readyz"); code != 200 {
		t.Errorf("/readyz: %d", code)
	}
	if code := get("/select/logsql/query?query=*"); code != 404 {
		t.Errorf("a gateway answers queries: %d", code)
	}
	// Everything acknowledged: nothing in flight, and the counters say so.
	if v := readMetric(t, s, "spate_kafka_records_total"); v < 2 {
		t.Errorf("spate_kafka_records_total %v", v)
	}
	inFlight := -1.0
	mfs, _ := s.m.reg.Gather()
	for _, mf := range mfs {
		if mf.GetName() == "spate_kafka_records_in_flight" {
			inFlight = mf.GetMetric()[0].GetGauge().GetValue()
		}
	}
	if inFlight != 0 {
		t.Errorf("spate_kafka_records_in_flight %v, want 0", inFlight)
	}
	// The cluster goes away: /readyz says so.
	c.Close()
	if code := get("/readyz"); code != 503 {
		t.Errorf("/readyz with no broker: %d", code)
	}
	if _, err := New(Config{Kafka: p, DataDir: t.TempDir()}); err == nil {
		t.Error("a gateway with a data directory was accepted")
	}
}
