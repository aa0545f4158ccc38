package benchhttp

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
)

func TestResponseVariants(t *testing.T) {
	want := Body()
	if len(want) < 6000 || !bytes.HasPrefix(want, []byte(`{"items":[{"id":0,"name":"item-0","price":100,"tags":["alpha","beta"]},`)) {
		t.Fatalf("body %d bytes: %.80s", len(want), want)
	}
	var c countWriter
	writeBody(&c)
	if c.writes != 801 {
		t.Fatalf("%d writes, want 801", c.writes)
	}
	for _, v := range ResponseVariants {
		srv := httptest.NewServer(responseHandler(v))
		resp, err := http.Get(srv.URL + "/json")
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		srv.Close()
		if !bytes.Equal(got, want) || resp.Header.Get("Content-Type") != "application/json" {
			t.Errorf("%s: %d bytes, type %q; want the %d-byte document", v, len(got), resp.Header.Get("Content-Type"), len(want))
		}
		chunked := len(resp.TransferEncoding) > 0
		if fixed := v == "assembled" || v == "prebuilt"; fixed == chunked {
			t.Errorf("%s: chunked %v", v, chunked)
		}
	}
}

func TestDownloadVariants(t *testing.T) {
	dir := t.TempDir()
	files := map[string][]byte{"empty.bin": nil, "a.bin": bytes.Repeat([]byte("0123456789"), 300000)}
	for name, b := range files {
		os.WriteFile(filepath.Join(dir, name), b, 0o644)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	for _, v := range DownloadVariants {
		h := downloadHandler(v, root)
		if v == "spate" || v == "nginx" {
			if h != nil {
				t.Errorf("%s: a handler for a whole server", v)
			}
			continue
		}
		srv := httptest.NewServer(h)
		for name, want := range files {
			resp, err := http.Get(srv.URL + "/" + name)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || !bytes.Equal(got, want) || resp.ContentLength != int64(len(want)) {
				t.Errorf("%s %s: %s, %d bytes (length %d), want %d", v, name, resp.Status, len(got), resp.ContentLength, len(want))
			}
		}
		for _, bad := range []string{"/../x", "/missing.bin", "/"} {
			resp, err := http.Get(srv.URL + bad)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != 404 {
				t.Errorf("%s %s: %s, want 404", v, bad, resp.Status)
			}
		}
		srv.Close()
	}
}
