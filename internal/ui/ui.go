// Package ui is spate's web page: a LogsQL editor, a hits histogram, the
// fields' top values and the rows, over the /select/logsql/* API, served
// by spate serve at /ui/ with every asset embedded in the binary (uPlot
// 1.6.32 vendored under assets/vendor/uplot with its licence).
//
// The page runs no inline script and renders every value as text: Handler
// sends a Content-Security-Policy that allows scripts, styles and
// connections from the same origin only.
package ui

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strconv"
	"strings"

	"github.com/klauspost/compress/gzip"
)

//go:embed assets
var assets embed.FS

// CSP is the Content-Security-Policy of every answer of Handler.
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// file is one asset, with its gzip form made once.
type file struct {
	data, gz []byte
	etag     string
	ctype    string
}

// Handler serves the page at prefix (e.g. "/ui/"): index.html for the
// prefix itself, the assets under it, each with an ETag (304 on a match),
// gzip when the client takes it, and no-cache (revalidate) so that a new
// binary's page is seen at once. Safe for concurrent use.
type Handler struct {
	prefix string
	files  map[string]*file
}

// NewHandler returns the Handler of the embedded assets under prefix.
func NewHandler(prefix string) (*Handler, error) {
	h := &Handler{prefix: prefix, files: map[string]*file{}}
	err := fs.WalkDir(assets, "assets", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := assets.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		f := &file{data: data, etag: `"` + hex.EncodeToString(sum[:8]) + `"`, ctype: mime.TypeByExtension(path.Ext(p))}
		if f.ctype == "" {
			f.ctype = "text/plain; charset=utf-8"
		}
		var b bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
		zw.Write(data)
		zw.Close()
		if b.Len() < len(data) {
			f.gz = b.Bytes()
		}
		h.files[strings.TrimPrefix(p, "assets/")] = f
		return nil
	})
	return h, err
}

// Size returns the bytes the page and its assets take, and gzipped.
func (h *Handler) Size() (raw, gz int) {
	for _, f := range h.files {
		raw += len(f.data)
		if f.gz != nil {
			gz += len(f.gz)
		} else {
			gz += len(f.data)
		}
	}
	return raw, gz
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "the page takes GET", http.StatusMethodNotAllowed)
		return
	}
	name := strings.TrimPrefix(r.URL.Path, h.prefix)
	if name == "" {
		name = "index.html"
	}
	f, ok := h.files[name]
	if !ok {
		http.Error(w, "no such file in the page: "+name, http.StatusNotFound)
		return
	}
	hd := w.Header()
	hd.Set("Content-Security-Policy", CSP)
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("Cache-Control", "no-cache")
	hd.Set("Vary", "Accept-Encoding")
	hd.Set("ETag", f.etag)
	hd.Set("Content-Type", f.ctype)
	if inm := r.Header.Get("If-None-Match"); inm != "" && strings.Contains(inm, f.etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	body := f.data
	if f.gz != nil && acceptsGzip(r.Header.Get("Accept-Encoding")) {
		hd.Set("Content-Encoding", "gzip")
		body = f.gz
	}
	w.Write(body)
}

// acceptsGzip reports whether an Accept-Encoding takes gzip (with a
// nonzero q).
func acceptsGzip(ae string) bool {
	for part := range strings.SplitSeq(ae, ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.TrimSpace(name) != "gzip" {
			continue
		}
		q, ok := strings.CutPrefix(strings.ReplaceAll(params, " ", ""), "q=")
		if !ok {
			return true
		}
		v, err := strconv.ParseFloat(q, 64)
		return err == nil && v > 0
	}
	return false
}
