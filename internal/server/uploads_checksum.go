package server

import (
	"bytes"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"hash"
	"io"
	"net/http"
	"strings"
)

// The tus checksum extension, which tusd does not have: a PATCH (or a
// creation-with-upload POST) carrying "Upload-Checksum: ALGO BASE64" is
// read whole (at most maxChecksumBody bytes: clients send chunks), its
// digest compared, and passed on to tusd only if it matches; otherwise the
// answer is 460 Checksum Mismatch and nothing is stored. OPTIONS advertises
// the extension and its algorithms.

const (
	maxChecksumBody        = 64 << 20
	statusChecksumMismatch = 460
)

func checksums(h http.Handler, expiration bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodOptions {
			h.ServeHTTP(&extensionWriter{ResponseWriter: w, expiration: expiration}, r)
			return
		}
		spec := r.Header.Get("Upload-Checksum")
		if spec == "" || r.Method != http.MethodPatch && r.Method != http.MethodPost {
			h.ServeHTTP(w, r)
			return
		}
		algo, sum, ok := strings.Cut(strings.TrimSpace(spec), " ")
		var hs hash.Hash
		switch strings.ToLower(algo) {
		case "sha1":
			hs = sha1.New()
		case "sha256":
			hs = sha256.New()
		}
		want, err := base64.StdEncoding.DecodeString(strings.TrimSpace(sum))
		if !ok || hs == nil || err != nil {
			w.Header().Set("Tus-Resumable", "1.0.0")
			http.Error(w, "Upload-Checksum: want \"sha1 BASE64\" or \"sha256 BASE64\"", http.StatusBadRequest)
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, maxChecksumBody+1))
		if err != nil {
			http.Error(w, "cannot read the body", http.StatusBadRequest)
			return
		}
		if len(body) > maxChecksumBody {
			w.Header().Set("Tus-Resumable", "1.0.0")
			http.Error(w, "a checksummed piece may be at most 64 MiB: send smaller chunks", http.StatusRequestEntityTooLarge)
			return
		}
		hs.Write(body)
		if !bytes.Equal(hs.Sum(nil), want) {
			w.Header().Set("Tus-Resumable", "1.0.0")
			http.Error(w, "Checksum Mismatch: the piece's digest is not Upload-Checksum's; nothing of it was stored", statusChecksumMismatch)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		h.ServeHTTP(w, r)
	})
}

// extensionWriter adds checksum (and expiration) to the Tus-Extension
// tusd announces.
type extensionWriter struct {
	http.ResponseWriter
	expiration bool
}

func (w *extensionWriter) WriteHeader(code int) {
	if ext := w.Header().Get("Tus-Extension"); ext != "" {
		ext += ",checksum"
		if w.expiration {
			ext += ",expiration"
		}
		w.Header().Set("Tus-Extension", ext)
		w.Header().Set("Tus-Checksum-Algorithm", "sha1,sha256")
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *extensionWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
