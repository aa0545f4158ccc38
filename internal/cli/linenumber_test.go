package cli

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLineNumber finds the line of a byte offset in a plain file, and
// declines for a compressed one whatever its name (its offsets are in the
// decompressed lines), for stdin and past the file's end.
func TestLineNumber(t *testing.T) {
	dir := t.TempDir()
	text := strings.Repeat("a line\n", 100) // 7 bytes a line
	plain := filepath.Join(dir, "app.log")
	if err := os.WriteFile(plain, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		offset, line int64
	}{{0, 1}, {6, 1}, {7, 2}, {700, 101}, {35, 6}} {
		if n, ok := lineNumber(plain, c.offset); !ok || n != c.line {
			t.Errorf("offset %d: line %d %v, want %d", c.offset, n, ok, c.line)
		}
	}
	if _, ok := lineNumber(plain, 701); ok {
		t.Error("an offset past the end has a line")
	}
	if _, ok := lineNumber("-", 0); ok {
		t.Error("stdin has a line number")
	}
	// A gzip file named like a plain log, made larger than the offset.
	var z bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&z, gzip.NoCompression)
	zw.Write([]byte(text))
	zw.Close()
	gz := filepath.Join(dir, "rotated.log")
	if err := os.WriteFile(gz, z.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if n, ok := lineNumber(gz, 35); ok {
		t.Errorf("a gzip file: line %d from its compressed bytes", n)
	}
}
