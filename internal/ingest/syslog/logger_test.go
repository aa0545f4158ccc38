package syslog

import (
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"testing"
	"time"
)

// TestLogger sends with the real client, util-linux logger(1), over TCP
// (octet counting and '\n' framing, RFC 5424) and UDP (RFC 3164).
func TestLogger(t *testing.T) {
	bin, err := exec.LookPath("logger")
	if err != nil {
		t.Skip("logger (util-linux) not installed:", err)
	}
	host, _ := os.Hostname()
	col := newCollector(t)
	tcpAddr, _ := serveTCP(t, Config{}, col.sink, nil, nil, nil)
	udpAddr, _ := serveUDP(t, Config{}, col.sink, nil)
	for i, c := range []struct {
		addr string
		args []string
		want map[string]string
	}{
		{tcpAddr, []string{"--tcp", "--rfc5424", "--octet-count"}, map[string]string{
			"_msg": "logger octet count", "format": "rfc5424", "app_name": "spatetest", "proc_id": "42", "msg_id": "-",
			"timeQuality.tzKnown": "1", "priority": "13", "level": "notice", "facility_keyword": "user",
			"_stream": `{app_name="spatetest",hostname="` + host + `",proc_id="42"}`}},
		{tcpAddr, []string{"--tcp", "--rfc5424"}, map[string]string{
			"_msg": "logger newline", "format": "rfc5424", "app_name": "spatetest", "proc_id": "42"}},
		{udpAddr, []string{"--udp", "--rfc3164"}, map[string]string{
			"_msg": "logger udp", "format": "rfc3164", "app_name": "spatetest", "proc_id": "42", "hostname": host}},
	} {
		h, p, _ := net.SplitHostPort(c.addr)
		msg := c.want["_msg"]
		args := append(c.args, "-n", h, "-P", p, "-t", "spatetest", "--id=42", msg)
		start := time.Now()
		if out, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
			t.Fatalf("logger %q: %v: %s", args, err, out)
		}
		col.wait(t, i+1, 1500*time.Millisecond)
		col.mu.Lock()
		l := col.lines[i]
		col.mu.Unlock()
		var got map[string]string
		if err := json.Unmarshal([]byte(l), &got); err != nil {
			t.Fatal(err)
		}
		for k, v := range c.want {
			if got[k] != v {
				t.Errorf("logger %q: %s = %q, want %q (line %s)", c.args, k, got[k], v, l)
			}
		}
		ts, err := time.Parse(time.RFC3339Nano, got["_time"])
		if err != nil || ts.Before(start.Add(-2*time.Second)) || ts.After(time.Now().Add(time.Second)) {
			t.Errorf("logger %q: _time %q, not the time sent (%v)", c.args, got["_time"], err)
		}
	}
}
