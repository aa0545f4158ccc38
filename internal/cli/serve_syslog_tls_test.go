package cli

import (
	"crypto/tls"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spate-io/spate/internal/testcert"
)

// TestServeSyslogTLS: serve --syslog-tcp with --syslog-tls-cert and
// --syslog-tls-key takes syslog over TLS (RFC 5425: octet counting); a
// plain-TCP client is refused by the handshake, and flag mistakes are
// usage errors.
func TestServeSyslogTLS(t *testing.T) {
	t.Setenv(mainEnv, "1")
	dir := t.TempDir()
	cert := testcert.New(t, "spate syslog test")
	certFile, keyFile := cert.CertFile, cert.KeyFile

	addr := freeAddr(t)
	srv := startServe(t, filepath.Join(dir, "data"), "--syslog-tcp", addr, "--syslog-tls-cert", certFile, "--syslog-tls-key", keyFile)
	if !strings.Contains(srv.log(), "syslog on tls://"+addr) {
		t.Errorf("serve does not say it takes TLS:\n%s", srv.log())
	}
	c, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: cert.Pool, ServerName: "127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"<13>1 2026-11-25T09:46:40Z h1 tlsapp 7 - - over tls one", "<13>1 2026-11-25T09:46:41Z h1 tlsapp 7 - - over tls two"} {
		fmt.Fprintf(c, "%d %s", len(m), m)
	}
	c.Close()
	rows := waitRows(t, srv.url, "app_name:tlsapp", 2, nil)
	if rows[0]["hostname"] != "h1" || !strings.HasPrefix(rows[0]["_msg"], "over tls") {
		t.Errorf("%v", rows)
	}
	// A client that does not speak TLS stores nothing.
	p, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(p, "20 <13>1 - h2 plain - -")
	p.SetReadDeadline(time.Now().Add(5 * time.Second))
	p.Read(make([]byte, 64)) // the handshake fails: the server closes
	p.Close()
	if n := len(vlQuery(t, srv.url, "hostname:h2", "0", "0")); n != 0 {
		t.Errorf("a plain-TCP message was stored over the TLS listener: %d rows", n)
	}

	for _, args := range [][]string{
		{"--syslog-tls-cert", certFile},
		{"--syslog-tcp", "127.0.0.1:0", "--syslog-tls-cert", certFile},
		{"--syslog-tcp", "127.0.0.1:0", "--syslog-tz", "Mars/Olympus"},
		{"--syslog-tcp", "127.0.0.1:0", "--syslog-tenant", "x:1"},
	} {
		code, _, stderr := runCLI(t, append([]string{"serve", "--data", t.TempDir()}, args...)...)
		if code != 2 {
			t.Errorf("%v: exit %d, want 2 (usage): %s", args, code, stderr)
		}
	}
}

// TestServeSyslogFlags: --syslog-tz reads RFC 3164 times in that zone,
// --syslog-tenant stores into that tenant, --syslog-stream-fields makes
// _stream from those fields.
func TestServeSyslogFlags(t *testing.T) {
	t.Setenv(mainEnv, "1")
	addr := freeAddr(t)
	srv := startServe(t, t.TempDir(), "--syslog-tcp", addr, "--syslog-tz", "Asia/Tokyo", "--syslog-tenant", "3:4", "--syslog-stream-fields", "app_name")
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	year := time.Now().In(time.FixedZone("JST", 9*3600)).Year()
	fmt.Fprintf(c, "<13>Jan  2 10:00:00 host7 myapp[99]: tz and tenant\n")
	c.Close()
	var rows []map[string]string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline) && len(rows) == 0; time.Sleep(100 * time.Millisecond) {
		rows = vlQuery(t, srv.url, "*", "3", "4")
	}
	if len(rows) != 1 {
		t.Fatalf("tenant 3:4 holds %d rows", len(rows))
	}
	r := rows[0]
	wantTime := time.Date(year, 1, 2, 1, 0, 0, 0, time.UTC) // 10:00 in Tokyo
	if r["_time"] != wantTime.Format(time.RFC3339) || r["_stream"] != `{app_name="myapp"}` || r["hostname"] != "host7" || r["_msg"] != "tz and tenant" {
		t.Errorf("row %v; want _time %s and _stream {app_name=\"myapp\"}", r, wantTime.Format(time.RFC3339))
	}
	if n := len(vlQuery(t, srv.url, "*", "0", "0")); n != 0 {
		t.Errorf("the default tenant holds %d rows", n)
	}
}
