package cli

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestServeAuthTenants: with a token file that binds tokens to tenants and
// permissions, a write-only token bound to 3:4 stores its lines in 3:4
// without tenant headers, is refused another tenant, and a read-only token
// may not ingest.
func TestServeAuthTenants(t *testing.T) {
	dir := t.TempDir()
	tokens := filepath.Join(t.TempDir(), "tokens")
	file := "# ingest for 3:4 only\nw34-secret tenant=3:4 write\n\nr-secret read   # dashboards\nold-secret\n"
	if err := os.WriteFile(tokens, []byte(file), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := startServe(t, dir, "--auth-token-file", tokens)
	post := func(token, body string, hdr ...string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, srv.url+"/insert/jsonline", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode, string(b)
	}
	if code, body := post("w34-secret", `{"i":1}`+"\n"+`{"i":2}`+"\n"); code != 200 {
		t.Fatalf("write token, no headers: %d %s", code, body)
	}
	if code, body := post("w34-secret", `{"i":3}`+"\n", "AccountID", "3", "ProjectID", "4"); code != 200 {
		t.Fatalf("write token, its own tenant: %d %s", code, body)
	}
	if code, body := post("w34-secret", `{"i":4}`+"\n", "AccountID", "5"); code != 403 || !strings.Contains(body, "bound to tenant 3:4") {
		t.Fatalf("write token, another tenant: %d %s", code, body)
	}
	if code, body := post("r-secret", `{"i":5}`+"\n"); code != 403 || !strings.Contains(body, "may only read") {
		t.Fatalf("read token: %d %s", code, body)
	}
	if code, body := post("old-secret", `{"i":6}`+"\n"); code != 200 {
		t.Fatalf("bare token: %d %s", code, body)
	}
	srv.stop(t, syscall.SIGTERM)

	for _, c := range []struct{ tenant, want string }{{"3:4", "1 2 3"}, {"0:0", "6"}, {"5:0", ""}} {
		code, out, stderr := runCLI(t, "query", "--tenant", c.tenant, "--format", "csv", "* | sort by (i) | fields i", dir)
		if code != ExitOK {
			t.Fatalf("query --tenant %s: exit %d: %s", c.tenant, code, stderr)
		}
		got := strings.Join(strings.Fields(strings.TrimPrefix(string(out), "i\n")), " ")
		if got != c.want {
			t.Errorf("tenant %s holds %q, want %q", c.tenant, got, c.want)
		}
	}
}

// TestServeAuthTokenFileErrors: serve refuses a token file it cannot
// read whole, naming the file and line and never the token.
func TestServeAuthTokenFileErrors(t *testing.T) {
	f := func(file, want string) {
		t.Helper()
		tokens := filepath.Join(t.TempDir(), "tokens")
		if err := os.WriteFile(tokens, []byte(file), 0o600); err != nil {
			t.Fatal(err)
		}
		code, _, stderr := runCLI(t, "serve", "--data", t.TempDir(), "--listen", "127.0.0.1:0", "--auth-token-file", tokens)
		want = strings.ReplaceAll(want, "F", tokens)
		if code == ExitOK || !strings.Contains(stderr, want) {
			t.Errorf("%q: exit %d, stderr %q, want %q", file, code, stderr, want)
		}
		if strings.Contains(stderr, "secret") {
			t.Errorf("%q: stderr quotes a token: %s", file, stderr)
		}
	}
	f("a\n# c\nsecret rw\n", `--auth-token-file F:3: unknown permission "rw"`)
	f("secret tenant=3:x\n", `--auth-token-file F:1: cannot parse tenant "3:x"`)
	f("secret write\nsecret read\n", `--auth-token-file F:2: the token of line 1 again`)
	f("# none\n", `--auth-token-file F holds no token`)
}
