package cli

import (
	"context"
	"fmt"
	"net"
	"net/http"
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
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(4, "logs"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	brokers := strings.Join(c.ListenAddrs(), ",")
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

	for _, args := range [][]string{
		{"serve", "--kafka-brokers", brokers},
		{"serve", "--kafka-topic", "logs"},
		{"serve", "--kafka-brokers", brokers, "--kafka-topic", "logs", "--data", t.TempDir()},
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
