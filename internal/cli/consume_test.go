package cli

import (
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
)

// TestConsumeCluster runs a gateway and storage nodes against kfake (see
// clusterTest).
func TestConsumeCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	t.Setenv(mainEnv, "1")
	_, brokers := newKfake(t)
	clusterTest(t, brokers)
}

// TestConsumeClusterRealBroker is TestConsumeCluster against a real
// Apache Kafka broker (SPATE_KAFKA=HOST:PORT; .ci/run starts one).
func TestConsumeClusterRealBroker(t *testing.T) {
	addr := os.Getenv("SPATE_KAFKA")
	if addr == "" {
		t.Skip("SPATE_KAFKA unset: no real broker")
	}
	t.Setenv(mainEnv, "1")
	clusterTest(t, addr)
}

// clusterTest: a gateway (serve --kafka-brokers) takes numbered lines
// into a new topic of 4 partitions while two storage nodes (spate consume)
// store them; mid-run one node is killed with SIGKILL and restarted, and a
// third node joins. Afterwards every acknowledged line is stored exactly
// once across the nodes, each node answers queries on its share, and the
// nodes' stats add up to the lines sent.
func clusterTest(t *testing.T, brokers string) {
	topic := fmt.Sprintf("spate-cluster-%d", rand.Uint32())
	gw := startServeArgs(t, "--kafka-brokers", brokers, "--kafka-topic", topic, "--kafka-create-topic", "4")
	defer gw.stop(t, syscall.SIGTERM)
	node := func(name, dir string) *serveChild {
		return startCommand(t, "consume", "--kafka-brokers", brokers, "--kafka-topic", topic, "--group", "g-"+topic,
			"--data", dir, "--instance-id", name, "--session-timeout", "20s", "--compress-delay", "0", "--log-level", "info",
			// Only rebalances commit: a killed node never has its last
			// batches committed, and must resume from its store.
			"--commit-interval", "1h")
	}
	dirs := []string{t.TempDir(), t.TempDir(), t.TempDir()}
	// One node holding every line, for the fan-out's answers.
	single := startServe(t, t.TempDir())
	defer single.stop(t, syscall.SIGTERM)
	nodes := []*serveChild{node("a", dirs[0]), node("b", dirs[1])}

	const requests, per = 120, 100
	sent := 0
	var restarted *serveChild
	send := func() {
		var b strings.Builder
		for range per {
			fmt.Fprintf(&b, `{"app":"a%d","seq":%d,"_msg":"line %d"}`+"\n", sent%7, sent, sent)
			sent++
		}
		for _, u := range []string{gw.url, single.url} {
			resp, err := http.Post(u+"/insert/jsonline?_stream_fields=app", "application/x-ndjson", strings.NewReader(b.String()))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Fatalf("request at seq %d to %s: %d", sent, u, resp.StatusCode)
			}
		}
	}
	// settled waits, sending, until the group has given out all 4
	// partitions and every node has some.
	settled := func() {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for {
			owned, idle := 0, false
			for _, nd := range nodes {
				n := metricValue(t, nd.url, "spate_kafka_partitions_owned")
				owned += n
				idle = idle || n == 0
			}
			if owned == 4 && !idle {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("the nodes own %d of 4 partitions after 60 s", owned)
			}
			send()
			time.Sleep(20 * time.Millisecond)
		}
	}
	for r := range requests {
		send()
		time.Sleep(5 * time.Millisecond)
		switch r {
		case requests / 3:
			// kill -9 mid-run, once the group is settled and the node
			// has stored lines (a checkpoint to resume from), and
			// restart with the same identity within the session timeout.
			settled()
			stored := func() bool {
				rows := vlQuery(t, nodes[0].url, "* | stats count() n", "0", "0")
				return len(rows) == 1 && rows[0]["n"] != "0"
			}
			for deadline := time.Now().Add(30 * time.Second); !stored(); {
				if time.Now().After(deadline) {
					t.Fatal("node a stored no line in 30 s")
				}
				send()
				time.Sleep(20 * time.Millisecond)
			}
			send()
			nodes[0].stop(t, syscall.SIGKILL)
			nodes[0] = node("a", dirs[0])
			restarted = nodes[0]
		case 2 * requests / 3:
			settled()
			nodes = append(nodes, node("c", dirs[2]))
		}
	}
	settled()
	total := func() (n int, each []int) {
		for _, nd := range nodes {
			rows := vlQuery(t, nd.url, "* | stats count() n", "0", "0")
			k := 0
			if len(rows) == 1 {
				k, _ = strconv.Atoi(rows[0]["n"])
			}
			each = append(each, k)
			n += k
		}
		return n, each
	}
	deadline := time.Now().Add(90 * time.Second)
	for {
		n, each := total()
		if n == sent {
			t.Logf("%d lines: nodes a, b, c hold %v", sent, each)
			break
		}
		if n > sent {
			for _, nd := range nodes {
				t.Log(nd.log())
			}
			t.Fatalf("the nodes hold %d lines (%v), more than the %d sent", n, each, sent)
		}
		if time.Now().After(deadline) {
			t.Fatalf("the nodes hold %d of %d lines (%v) after 90 s", n, sent, each)
		}
		time.Sleep(200 * time.Millisecond)
	}
	seen := make([]int, sent)
	for i, nd := range nodes {
		for _, r := range vlQuery(t, nd.url, "* | fields seq", "0", "0") {
			k, err := strconv.Atoi(r["seq"])
			if err != nil || k < 0 || k >= sent {
				t.Fatalf("node %d: row %v", i, r)
			}
			seen[k]++
		}
	}
	for k, c := range seen {
		if c != 1 {
			t.Fatalf("seq %d stored %d times", k, c)
		}
	}
	// Per-stream counts add up across nodes.
	byApp := map[string]int{}
	for _, nd := range nodes {
		for _, r := range vlQuery(t, nd.url, "* | stats by (app) count() n", "0", "0") {
			k, _ := strconv.Atoi(r["n"])
			byApp[r["app"]] += k
		}
	}
	for a := range 7 {
		want := 0
		for k := range sent {
			if k%7 == a {
				want++
			}
		}
		if got := byApp[fmt.Sprintf("a%d", a)]; got != want {
			t.Fatalf("app a%d: %d lines across nodes, want %d", a, got, want)
		}
	}
	if !strings.Contains(restarted.log(), "resuming a partition from the store's checkpoint") {
		t.Errorf("the restarted node did not resume from its checkpoint:\n%s", restarted.log())
	}
	// A server over the three nodes answers as the single node does.
	var urls []string
	for _, nd := range nodes {
		urls = append(urls, nd.url)
	}
	fan := startServeArgs(t, "--select-peers", strings.Join(urls, ","))
	defer fan.stop(t, syscall.SIGTERM)
	for _, q := range []string{"* | stats count() n", "* | stats by (app) count() n | sort by (app)", "* | stats by (app) count_uniq(seq) u, max(seq) m | sort by (app)"} {
		want, got := vlQuery(t, single.url, q, "0", "0"), vlQuery(t, fan.url, q, "0", "0")
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: over the nodes %v, one node %v", q, got, want)
		}
	}
	// The metrics say what happened.
	body := httpBody(t, nodes[2].url+"/metrics")
	if !strings.Contains(body, `spate_kafka_partitions_total{event="assigned"}`) || !strings.Contains(body, "spate_kafka_consumer_lag") {
		t.Errorf("node c's metrics lack the consumer's:\n%s", body)
	}
	for _, nd := range nodes {
		nd.stop(t, syscall.SIGTERM)
	}
}

// metricValue returns the value of an unlabelled metric on url's
// /metrics, or 0.
func metricValue(t *testing.T, url, name string) int {
	t.Helper()
	body := httpBody(t, url+"/metrics")
	for _, l := range strings.Split(body, "\n") {
		if v, ok := strings.CutPrefix(l, name+" "); ok {
			f, _ := strconv.ParseFloat(v, 64)
			return int(f)
		}
	}
	return 0
}

func httpBody(t *testing.T, u string) string {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestConsumeErrors: a missing topic stops consume at start, saying so;
// flags' mistakes are usage errors.
func TestConsumeErrors(t *testing.T) {
	t.Setenv(mainEnv, "1")
	_, brokers := newKfake(t, kfake.SeedTopics(1, "logs"))
	code, _, stderr := runCLI(t, "consume", "--listen", "127.0.0.1:0", "--kafka-brokers", brokers, "--kafka-topic", "nope", "--data", t.TempDir())
	if code != ExitFailure || !strings.Contains(stderr, `the topic does not exist: "nope"`) {
		t.Errorf("missing topic: exit %d: %s", code, stderr)
	}
	for _, args := range [][]string{
		{"consume", "--kafka-brokers", brokers, "--kafka-topic", "logs"},                                                           // no --data
		{"consume", "--kafka-brokers", brokers, "--data", t.TempDir()},                                                             // no topic
		{"consume", "--kafka-brokers", brokers, "--kafka-topic", "logs", "--data", t.TempDir(), "--dynamic", "--instance-id", "x"}, // both
		{"consume", "--kafka-brokers", brokers, "--kafka-topic", "logs", "--data", t.TempDir(), "--commit-interval", "0s"},
		{"serve", "--select-peers", "http://127.0.0.1:1", "--data", t.TempDir()},
		{"serve", "--select-peers", "127.0.0.1:1"},
		{"serve", "--data", t.TempDir(), "--allow-partial"},
	} {
		if code, _, stderr := runCLI(t, args...); code != ExitUsage {
			t.Errorf("%v: exit %d, want %d: %s", args, code, ExitUsage, stderr)
		}
	}
}

// TestConsumeBrokerRestartRealBroker restarts a real broker while a
// gateway and a storage node run (SPATE_KAFKA=HOST:PORT, and
// SPATE_KAFKA_RESTART, a shell command that stops and starts it with its
// data; .ci/run gives both): the node reconnects by itself, and every line
// acknowledged before and after the restart is stored exactly once.
func TestConsumeBrokerRestartRealBroker(t *testing.T) {
	addr, restart := os.Getenv("SPATE_KAFKA"), os.Getenv("SPATE_KAFKA_RESTART")
	if addr == "" || restart == "" {
		t.Skip("SPATE_KAFKA or SPATE_KAFKA_RESTART unset: no real broker to restart")
	}
	t.Setenv(mainEnv, "1")
	topic := fmt.Sprintf("spate-restart-%d", rand.Uint32())
	gw := startServeArgs(t, "--kafka-brokers", addr, "--kafka-topic", topic, "--kafka-create-topic", "4")
	defer gw.stop(t, syscall.SIGTERM)
	nd := startCommand(t, "consume", "--kafka-brokers", addr, "--kafka-topic", topic, "--group", "g-"+topic, "--data", t.TempDir())
	defer nd.stop(t, syscall.SIGTERM)
	sent := 0
	send := func() {
		var b strings.Builder
		for range 100 {
			fmt.Fprintf(&b, `{"app":"a%d","seq":%d}`+"\n", sent%5, sent)
			sent++
		}
		resp, err := http.Post(gw.url+"/insert/jsonline?_stream_fields=app", "application/x-ndjson", strings.NewReader(b.String()))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("request at seq %d: %d", sent, resp.StatusCode)
		}
	}
	for range 10 {
		send()
	}
	out, err := exec.Command("bash", "-c", restart).CombinedOutput()
	if err != nil {
		t.Fatalf("restarting the broker: %v\n%s", err, out)
	}
	// The gateway answers 503 until it reaches the broker again.
	deadline := time.Now().Add(60 * time.Second)
	for {
		if code, _, _ := httpGetStatus(gw.url + "/readyz"); code == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the gateway is not ready 60 s after the broker restarted")
		}
		time.Sleep(200 * time.Millisecond)
	}
	for range 10 {
		send()
	}
	deadline = time.Now().Add(90 * time.Second)
	for {
		rows := vlQuery(t, nd.url, "* | stats count() n", "0", "0")
		if len(rows) == 1 && rows[0]["n"] == strconv.Itoa(sent) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the node holds %v of %d lines 90 s after the restart:\n%s", rows, sent, nd.log())
		}
		time.Sleep(200 * time.Millisecond)
	}
	seen := make([]int, sent)
	for _, r := range vlQuery(t, nd.url, "* | fields seq", "0", "0") {
		k, _ := strconv.Atoi(r["seq"])
		seen[k]++
	}
	for k, c := range seen {
		if c != 1 {
			t.Fatalf("seq %d stored %d times", k, c)
		}
	}
}
