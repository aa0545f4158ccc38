package fileserve

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// decode undoes a Content-Encoding with the real decoders.
func decode(t *testing.T, enc string, body []byte) []byte {
	t.Helper()
	var r io.Reader
	switch enc {
	case "":
		return body
	case "zstd":
		d, err := zstd.NewReader(bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		r = d
	case "gzip":
		g, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		r = g
	case "br":
		r = brotli.NewReader(bytes.NewReader(body))
	default:
		t.Fatalf("unknown Content-Encoding %q", enc)
	}
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("%s: %v", enc, err)
	}
	return out
}

func TestEncodings(t *testing.T) {
	root := t.TempDir()
	js := bytes.Repeat([]byte("function f(x) { return x * 2; }\n"), 2000)
	json := bytes.Repeat([]byte(`{"level":"info","msg":"hello"}`+"\n"), 3000)
	write := func(name string, data []byte, mtime time.Time) {
		p := filepath.Join(root, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	write("app.js", js, t0)
	var zb, gb, bb bytes.Buffer
	ze, _ := zstd.NewWriter(&zb)
	ze.Write(js)
	ze.Close()
	ge := gzip.NewWriter(&gb)
	ge.Write(js)
	ge.Close()
	be := brotli.NewWriterLevel(&bb, 9)
	be.Write(js)
	be.Close()
	write("app.js.zst", zb.Bytes(), t0.Add(time.Minute))
	write("app.js.gz", gb.Bytes(), t0.Add(time.Minute))
	write("app.js.br", bb.Bytes(), t0.Add(time.Minute))
	write("data.json", json, t0)
	write("data.json.gz", []byte("stale"), t0.Add(-time.Hour)) // older than data.json: never served
	write("small.txt", []byte("tiny"), t0)
	write("pic.png", bytes.Repeat([]byte{0x89, 'P', 'N', 'G'}, 1000), t0)
	h, err := New(root, "/files/", Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()

	identity := serve(h, "GET", "/files/app.js").Header().Get("ETag")
	tags := map[string]string{"": identity}
	for _, c := range []struct {
		target, ae, enc string
		want            []byte
		stored          []byte // the bytes sent as they are stored, for siblings
	}{
		{"/files/app.js", "gzip, br;q=0.9, zstd;q=0.5", "gzip", js, gb.Bytes()},
		{"/files/app.js", "zstd, gzip", "zstd", js, zb.Bytes()},
		{"/files/app.js", "br", "br", js, bb.Bytes()},
		{"/files/app.js", "*", "zstd", js, zb.Bytes()},
		{"/files/app.js", "identity", "", js, nil},
		{"/files/app.js", "gzip;q=0, deflate", "", js, nil},
		{"/files/data.json", "gzip", "gzip", json, nil}, // the stale sibling is skipped: live gzip
		{"/files/data.json", "zstd", "zstd", json, nil},
		{"/files/data.json", "br", "br", json, nil},
		{"/files/data.json", "br;q=1, gzip;q=1, zstd;q=1", "zstd", json, nil},
		{"/files/small.txt", "gzip", "", []byte("tiny"), nil},
		{"/files/pic.png", "gzip", "", bytes.Repeat([]byte{0x89, 'P', 'N', 'G'}, 1000), nil},
	} {
		w := serve(h, "GET", c.target, "Accept-Encoding", c.ae)
		enc := w.Header().Get("Content-Encoding")
		if w.Code != 200 || enc != c.enc || !strings.Contains(w.Header().Get("Vary"), "Accept-Encoding") {
			t.Errorf("%s %q: %d, Content-Encoding %q (want %q), Vary %q", c.target, c.ae, w.Code, enc, c.enc, w.Header().Get("Vary"))
			continue
		}
		if c.stored != nil && enc != "" && !bytes.Equal(w.Body.Bytes(), c.stored) {
			t.Errorf("%s %q: the sibling was not sent as stored", c.target, c.ae)
		}
		if got := decode(t, enc, w.Body.Bytes()); !bytes.Equal(got, c.want) {
			t.Errorf("%s %q: %d bytes decoded, want the file's %d", c.target, c.ae, len(got), len(c.want))
		}
		tag := w.Header().Get("ETag")
		if c.target == "/files/app.js" {
			if prev, ok := tags[enc]; ok && prev != tag {
				t.Errorf("%s: two ETags for %q: %s, %s", c.target, enc, prev, tag)
			}
			for e, other := range tags {
				if e != enc && other == tag {
					t.Errorf("%s: %q and %q share the ETag %s", c.target, e, enc, tag)
				}
			}
			tags[enc] = tag
		}
		// A client holding that representation gets 304.
		if w := serve(h, "GET", c.target, "Accept-Encoding", c.ae, "If-None-Match", tag); w.Code != 304 {
			t.Errorf("%s %q If-None-Match %s: %d", c.target, c.ae, tag, w.Code)
		}
	}
	// Ranges are of the file's own bytes.
	if w := serve(h, "GET", "/files/data.json", "Accept-Encoding", "gzip", "Range", "bytes=0-9"); w.Code != 206 || w.Header().Get("Content-Encoding") != "" || w.Body.String() != string(json[:10]) {
		t.Errorf("range with Accept-Encoding: %d %q %q", w.Code, w.Header().Get("Content-Encoding"), w.Body.String())
	}
	if w := serve(h, "HEAD", "/files/data.json", "Accept-Encoding", "zstd"); w.Code != 200 || w.Body.Len() != 0 || w.Header().Get("Content-Encoding") != "zstd" {
		t.Errorf("HEAD zstd: %d %d %v", w.Code, w.Body.Len(), w.Header())
	}
}
