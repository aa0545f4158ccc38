package cli

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestServeKafkaGateway: serve --kafka-brokers --kafka-topic produces what
// it takes (HTTP and syslog) to Kafka, keyed by _stream, and answers once
// Kafka has it; the flags' mistakes are usage errors.
func TestServeKafkaGateway(t *testing.T) {
	t.Setenv(mainEnv, "1")
	c, brokers := newKfake(t, kfake.SeedTopics(4, "logs"))
	sysAddr := freeAddr(t)
	srv := startServeArgs(t, "--kafka-brokers", brokers, "--kafka-topic", "logs", "--syslog-tcp", sysAddr)
	resp, err := http.Post(srv.url+"/insert/jsonline?_stream_fields=app", "application/x-ndjson",
		strings.NewReader(`{"app":"web","_msg":"over kafka"}`+"\n"+`{"app":"db","_msg":"also"}`+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("ingest through the gateway: %d", resp.StatusCode)
	}
	sc, err := net.Dial("tcp", sysAddr)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(sc, "<13>1 2026-11-26T10:00:00Z h1 sysapp 1 - - from syslog\n")
	sc.Close()

	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.ConsumeTopics("logs"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	got := map[string]string{}
	for len(got) < 3 && ctx.Err() == nil {
		cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) {
			for _, m := range []string{"over kafka", "also", "from syslog"} {
				if strings.Contains(string(r.Value), m) {
					got[m] = string(r.Key)
				}
			}
		})
	}
	if got["over kafka"] != `{app="web"}` || got["also"] != `{app="db"}` || !strings.Contains(got["from syslog"], `app_name="sysapp"`) {
		t.Fatalf("records by message and key: %v", got)
	}
	if code, _, _ := httpGetStatus(srv.url + "/readyz"); code != 200 {
		t.Errorf("/readyz: %d", code)
	}

	// A missing topic stops serve, saying so; --kafka-create-topic makes it.
	if code, _, stderr := runCLI(t, "serve", "--listen", "127.0.0.1:0", "--kafka-brokers", brokers, "--kafka-topic", "nope"); code != ExitFailure || !strings.Contains(stderr, `the topic does not exist: "nope"`) || !strings.Contains(stderr, "--kafka-create-topic") {
		t.Errorf("missing topic: exit %d: %s", code, stderr)
	}
	made := startServeArgs(t, "--kafka-brokers", brokers, "--kafka-topic", "made", "--kafka-create-topic", "2")
	resp, err = http.Post(made.url+"/insert/jsonline", "application/x-ndjson", strings.NewReader(`{"_msg":"into a made topic"}`+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("ingest into a created topic: %d", resp.StatusCode)
	}
	mc, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.ConsumeTopics("made"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer mc.Close()
	var madeRecs []string
	for len(madeRecs) < 1 && ctx.Err() == nil {
		mc.PollFetches(ctx).EachRecord(func(r *kgo.Record) { madeRecs = append(madeRecs, string(r.Value)) })
	}
	if len(madeRecs) != 1 || !strings.Contains(madeRecs[0], "into a made topic") {
		t.Errorf("created topic holds %v", madeRecs)
	}

	for _, args := range [][]string{
		{"serve", "--kafka-brokers", brokers},
		{"serve", "--kafka-topic", "logs"},
		{"serve", "--kafka-brokers", brokers, "--kafka-topic", "logs", "--data", t.TempDir()},
		{"serve", "--kafka-brokers", brokers, "--kafka-topic", "logs", "--kafka-sasl", "GSSAPI"},
		{"serve", "--kafka-brokers", brokers, "--kafka-topic", "logs", "--kafka-sasl-user", "u"},
	} {
		if code, _, stderr := runCLI(t, args...); code != ExitUsage {
			t.Errorf("%v: exit %d, want %d: %s", args, code, ExitUsage, stderr)
		}
	}
}

func httpGetStatus(u string) (int, string, error) {
	resp, err := http.Get(u)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	return resp.StatusCode, resp.Status, nil
}

// TestServeKafkaRealBroker runs the gateway against a real Apache Kafka
// broker (SPATE_KAFKA=HOST:PORT and SPATE_KAFKA_TOPIC, a topic of several
// partitions; .ci/run starts one with ../shared/kafka/start.sh): every
// line of every acknowledged request is in the topic exactly once, each
// stream's lines in one partition and in order.
func TestServeKafkaRealBroker(t *testing.T) {
	addr, topic := os.Getenv("SPATE_KAFKA"), os.Getenv("SPATE_KAFKA_TOPIC")
	if addr == "" || topic == "" {
		t.Skip("SPATE_KAFKA and SPATE_KAFKA_TOPIC unset: no real broker")
	}
	t.Setenv(mainEnv, "1")
	srv := startServeArgs(t, "--kafka-brokers", addr, "--kafka-topic", topic)
	const requests, per = 20, 1000
	for r := range requests {
		var b strings.Builder
		for i := range per {
			seq := r*per + i
			fmt.Fprintf(&b, `{"app":"a%d","seq":%d,"_msg":"line %d"}`+"\n", seq%10, seq, seq)
		}
		resp, err := http.Post(srv.url+"/insert/jsonline?_stream_fields=app", "application/x-ndjson", strings.NewReader(b.String()))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("request %d: %d", r, resp.StatusCode)
		}
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	seen := map[int]int{}
	lastSeq := map[string]int{}
	partOf := map[string]int32{}
	parts := map[int32]bool{}
	for len(seen) < requests*per && ctx.Err() == nil {
		cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) {
			var seq int
			v := string(r.Value)
			if i := strings.Index(v, `"seq":`); i >= 0 {
				fmt.Sscanf(v[i+6:], "%d", &seq)
			}
			seen[seq]++
			key := string(r.Key)
			if p, ok := partOf[key]; ok && p != r.Partition {
				t.Errorf("stream %s in partitions %d and %d", key, p, r.Partition)
			}
			partOf[key] = r.Partition
			parts[r.Partition] = true
			if prev, ok := lastSeq[key]; ok && seq <= prev {
				t.Errorf("stream %s: seq %d after %d", key, seq, prev)
			}
			lastSeq[key] = seq
		})
	}
	if len(seen) != requests*per {
		t.Fatalf("%d of %d lines in the topic", len(seen), requests*per)
	}
	for seq, n := range seen {
		if n != 1 {
			t.Fatalf("line %d is in the topic %d times", seq, n)
		}
	}
	if len(partOf) != 10 || len(parts) < 2 {
		t.Errorf("%d streams over %d partitions", len(partOf), len(parts))
	}
}

// TestServeKafkaSASL: the gateway's --kafka-sasl flags authenticate it to
// a cluster that requires SASL; without them /readyz says no broker
// answers.
func TestServeKafkaSASL(t *testing.T) {
	t.Setenv(mainEnv, "1")
	_, brokers := newKfake(t, kfake.SeedTopics(1, "logs"), kfake.EnableSASL(), kfake.Superuser("PLAIN", "gw", "pw-42"))
	pass := filepath.Join(t.TempDir(), "pass")
	os.WriteFile(pass, []byte("pw-42\n"), 0o600)
	srv := startServeArgs(t, "--kafka-brokers", brokers, "--kafka-topic", "logs", "--kafka-sasl", "PLAIN", "--kafka-sasl-user", "gw", "--kafka-sasl-password-file", pass)
	resp, err := http.Post(srv.url+"/insert/jsonline", "application/x-ndjson", strings.NewReader(`{"_msg":"authenticated"}`+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("with SASL: %d", resp.StatusCode)
	}
	if code, _, _ := httpGetStatus(srv.url + "/readyz"); code != 200 {
		t.Errorf("/readyz with SASL: %d", code)
	}
	bare := startServeArgs(t, "--kafka-brokers", brokers, "--kafka-topic", "logs")
	if code, _, _ := httpGetStatus(bare.url + "/readyz"); code != 503 {
		t.Errorf("/readyz without SASL: %d", code)
	}
}

// newKfake starts an in-process Kafka (kfake) of one broker with opts,
// closed when t ends, and returns it and its address list as the
// --kafka-brokers flag takes it.
func newKfake(t *testing.T, opts ...kfake.Opt) (*kfake.Cluster, string) {
	t.Helper()
	c, err := kfake.NewCluster(append([]kfake.Opt{kfake.NumBrokers(1)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c, strings.Join(c.ListenAddrs(), ",")
}
