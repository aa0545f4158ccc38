package cli

import (
	"crypto/tls"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/spate-io/spate/internal/testcert"
	"github.com/twmb/franz-go/pkg/kfake"
)

// TestConsumeTLSSASL: against a cluster that takes only TLS and
// SCRAM-SHA-512, a gateway and a storage node given --kafka-tls-ca,
// --kafka-sasl, --kafka-sasl-user and --kafka-sasl-password-file carry
// lines from /insert/jsonline into the node's store; a node with a wrong
// password, or without TLS, fails at its start with an error that says why
// instead of storing nothing in silence.
func TestConsumeTLSSASL(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	t.Setenv(mainEnv, "1")
	cert := testcert.New(t, "kfake")
	_, brokers := newKfake(t, kfake.SeedTopics(2, "logs"),
		kfake.TLS(&tls.Config{Certificates: []tls.Certificate{cert.TLS}}),
		kfake.EnableSASL(), kfake.Superuser("SCRAM-SHA-512", "node", "s3cret"))
	dir := t.TempDir()
	pass, wrong := filepath.Join(dir, "pass"), filepath.Join(dir, "wrong")
	os.WriteFile(pass, []byte("s3cret\n"), 0o600)
	os.WriteFile(wrong, []byte("guess\n"), 0o600)
	sec := func(passFile string) []string {
		return []string{"--kafka-brokers", brokers, "--kafka-topic", "logs", "--kafka-tls-ca", cert.CertFile,
			"--kafka-sasl", "SCRAM-SHA-512", "--kafka-sasl-user", "node", "--kafka-sasl-password-file", passFile}
	}

	gw := startServeArgs(t, sec(pass)...)
	defer gw.stop(t, syscall.SIGTERM)
	node := startCommand(t, "consume", append(sec(pass), "--group", "g", "--data", filepath.Join(dir, "node"), "--compress-delay", "0")...)
	defer node.stop(t, syscall.SIGTERM)
	const n = 50
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `{"app":"secure","seq":%d,"_msg":"over tls and scram %d"}`+"\n", i, i)
	}
	resp, err := http.Post(gw.url+"/insert/jsonline?_stream_fields=app", "application/x-ndjson", strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("gateway: %d", resp.StatusCode)
	}
	rows := waitRows(t, node.url, "app:secure | stats count() n, count_uniq(seq) u", 1, nil)
	// waitRows waits for one stats row; wait for all n lines too.
	for i := 0; rows[0]["n"] != fmt.Sprint(n) && i < 100; i++ {
		rows = waitRows(t, node.url, "app:secure | stats count() n, count_uniq(seq) u", 1, nil)
	}
	if rows[0]["n"] != fmt.Sprint(n) || rows[0]["u"] != fmt.Sprint(n) {
		t.Errorf("the node stored %v, want %d distinct lines", rows, n)
	}
	if code, _, _ := httpGetStatus(node.url + "/readyz"); code != 200 {
		t.Errorf("/readyz of the node: %d", code)
	}

	// A broker certificate the system's roots do not vouch for is a
	// mistake in the flags: both roles stop at once and say so.
	untrusted := []string{"--kafka-brokers", brokers, "--kafka-topic", "logs", "--kafka-tls"}
	for _, args := range [][]string{
		append([]string{"consume", "--listen", "127.0.0.1:0", "--group", "g2", "--data", t.TempDir()}, untrusted...),
		append([]string{"serve", "--listen", "127.0.0.1:0"}, untrusted...),
	} {
		code, _, stderr := runCLI(t, args...)
		if code != ExitFailure || !strings.Contains(stderr, "certificate signed by unknown authority") || !strings.Contains(stderr, "--kafka-tls-ca") {
			t.Errorf("%s with an untrusted broker: exit %d: %s", args[0], code, stderr)
		}
	}
	// A wrong password: kfake closes the connection without a reason (a
	// real broker answers SASL_AUTHENTICATION_FAILED, which stops the node
	// as above), so the node waits, says why, is not ready, and stores
	// nothing.
	bad := startCommand(t, "consume", append(sec(wrong), "--group", "g3", "--data", filepath.Join(dir, "bad"))...)
	defer bad.stop(t, syscall.SIGTERM)
	if !strings.Contains(bad.log(), "Kafka does not answer yet") {
		t.Errorf("the node with a wrong password does not say it cannot reach Kafka:\n%s", bad.log())
	}
	if code, _, _ := httpGetStatus(bad.url + "/readyz"); code != 503 {
		t.Errorf("/readyz of the node with a wrong password: %d", code)
	}
	if rows := vlQuery(t, bad.url, "* | stats count() n", "0", "0"); len(rows) != 1 || rows[0]["n"] != "0" {
		t.Errorf("the node with a wrong password stored %v", rows)
	}
}
