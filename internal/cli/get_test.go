package cli

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spate-io/spate/internal/fileserve"
)

// TestGetCommand: spate get downloads through ranged requests and checks
// --sha256; bad flags are usage errors.
func TestGetCommand(t *testing.T) {
	src := t.TempDir()
	data := bytes.Repeat([]byte("0123456789"), 300000)
	if err := os.WriteFile(filepath.Join(src, "f.bin"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	h, err := fileserve.New(src, "/files/", fileserve.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	srv := httptest.NewServer(h)
	defer srv.Close()
	out := filepath.Join(t.TempDir(), "copy.bin")
	sum := sha256.Sum256(data)
	code, _, stderr := runCLI(t, "get", "-o", out, "--connections", "3", "--chunk-size", "256KiB", "--sha256", hex.EncodeToString(sum[:]), srv.URL+"/files/f.bin")
	got, _ := os.ReadFile(out)
	if code != ExitOK || !bytes.Equal(got, data) || !strings.Contains(string(stderr), "3 connections") || !strings.Contains(string(stderr), "sha256 ok") {
		t.Fatalf("exit %d, %d bytes: %s", code, len(got), stderr)
	}
	if code, _, stderr := runCLI(t, "get", "-o", out, "--sha256", strings.Repeat("0", 64), srv.URL+"/files/f.bin"); code == ExitOK || !strings.Contains(string(stderr), "sha256") {
		t.Errorf("wrong sha256: exit %d: %s", code, stderr)
	}
	if code, _, _ := runCLI(t, "get", "--connections", "0", srv.URL+"/files/f.bin"); code != ExitUsage {
		t.Errorf("--connections 0: exit %d", code)
	}
}
