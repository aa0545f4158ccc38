package ui

import (
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

// TestHandler: the page and its assets, with the CSP, ETags, gzip, and
// errors for what is not there.
func TestHandler(t *testing.T) {
	h, err := NewHandler("/ui/")
	if err != nil {
		t.Fatal(err)
	}
	get := func(path string, hdr ...string) *http.Response {
		req := httptest.NewRequest(http.MethodGet, path, nil)
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		return w.Result()
	}
	resp := get("/ui/")
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !strings.Contains(string(body), `<script src="app.js" defer></script>`) || resp.Header.Get("Content-Security-Policy") != CSP {
		t.Fatalf("%d %v %.200s", resp.StatusCode, resp.Header, body)
	}
	if regexp.MustCompile(`<script>|<style|\son[a-z]+=|style=`).Match(body) {
		t.Error("the page has an inline script or handler, which the CSP forbids")
	}
	etag := resp.Header.Get("ETag")
	if r := get("/ui/", "If-None-Match", etag); r.StatusCode != http.StatusNotModified {
		t.Errorf("If-None-Match: %d", r.StatusCode)
	}
	r := get("/ui/vendor/uplot/uPlot.iife.min.js", "Accept-Encoding", "gzip, br")
	if r.Header.Get("Content-Encoding") != "gzip" || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/javascript") {
		t.Errorf("%v", r.Header)
	}
	zr, err := gzip.NewReader(r.Body)
	if err != nil {
		t.Fatal(err)
	}
	js, _ := io.ReadAll(zr)
	if !strings.Contains(string(js), "uPlot") {
		t.Error("the gzip body is not uPlot")
	}
	if r := get("/ui/vendor/uplot/uPlot.iife.min.js", "Accept-Encoding", "gzip;q=0"); r.Header.Get("Content-Encoding") != "" {
		t.Error("gzip sent to a client that refuses it")
	}
	if r := get("/ui/vendor/uplot/LICENSE"); r.StatusCode != 200 {
		t.Errorf("the licence is not served: %d", r.StatusCode)
	}
	if r := get("/ui/nope.js"); r.StatusCode != 404 {
		t.Errorf("missing file: %d", r.StatusCode)
	}
	req := httptest.NewRequest(http.MethodPost, "/ui/", nil)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	if w.Code != 405 {
		t.Errorf("POST: %d", w.Code)
	}
	// Offline: our files load nothing from elsewhere.
	for _, name := range []string{"index.html", "app.js", "app.css"} {
		if regexp.MustCompile(`(?i)(https?:)?//[a-z0-9.-]+\.[a-z]{2,}/`).Match(h.files[name].data) {
			t.Errorf("%s refers to another host", name)
		}
	}
	// The budget: the whole page under 300 KB gzipped.
	raw, gz := h.Size()
	t.Logf("page and assets: %d bytes, %d gzipped", raw, gz)
	if gz > 300<<10 {
		t.Errorf("the page is %d bytes gzipped, over 300 KiB", gz)
	}
}
