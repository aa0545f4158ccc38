// Package fileserve serves the files under one directory over HTTP, as
// `spate serve --files DIR` does at GET and HEAD /files/{path}: RFC 9110
// ranges and conditional requests (through http.ServeContent), strong
// ETags, Cache-Control from options, Content-Disposition with an RFC 6266
// filename* for names that are not ASCII, and zstd, br and gzip by
// Accept-Encoding (precompressed siblings, or compressed on the fly).
//
// Every file is opened through an os.Root: a path cannot leave the
// directory, whether by "..", an absolute path or a symbolic link. Paths
// with a NUL, a backslash, an encoded slash or backslash, a "." or ".."
// segment, or (unless Options.Dotfiles) a segment starting with '.' are
// refused with 404 before any file is looked at; a directory gets 403.
//
// A Handler is safe for concurrent use. Identity bodies are written by
// http.ServeContent, which copies from the *os.File to the connection:
// the net/http response writer turns that into sendfile(2) when the
// writer chain passes io.ReaderFrom through.
package fileserve

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"io/fs"
	"mime"
	"net/http"
	"net/url"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"
)

// DefaultMaxRanges is Options.MaxRanges when it is 0.
const DefaultMaxRanges = 64

// Options configure a Handler. The zero value serves with no
// Cache-Control, no dotfiles and DefaultMaxRanges.
type Options struct {
	// Dotfiles allows path segments that start with '.'.
	Dotfiles bool
	// CacheControl, if set, is the Cache-Control of every file.
	CacheControl string
	// Immutable lists path.Match patterns of file paths (relative to the
	// directory, with '/') whose Cache-Control gets "immutable" (and
	// "public, max-age=31536000" when CacheControl is empty).
	Immutable []string
	// MaxRanges caps the ranges of one request; a Range header with more
	// is ignored and the whole file sent (as nginx's max_ranges does).
	MaxRanges int
	// Browse lists directories: GET /files/dir/ answers an HTML page of
	// the entries, or JSON with Accept: application/json. Without it a
	// directory gets 403.
	Browse bool
	// CompressMin is the smallest file compressed on the fly (0:
	// DefaultCompressMin; negative: never). Precompressed siblings are
	// served whatever the size.
	CompressMin int64
}

// DefaultCompressMin is Options.CompressMin when it is 0.
const DefaultCompressMin = 1024

// Handler serves the files of one directory under a URL prefix.
type Handler struct {
	root   *os.Root
	prefix string
	opts   Options

	// small caches the answers of plain GETs of small files (see
	// cachedFile), by path; smallBytes is what it holds (cost).
	small      sync.Map
	smallBytes atomic.Int64
}

// A cachedFile is a small file's content and headers. It is trusted for
// smallRecheck after it was read or last checked, then checked again with
// one stat (size and modification time), as nginx's open_file_cache_valid
// does: a file changed in place may be answered as it was for up to that
// long. At most smallCacheBytes are cached.
type cachedFile struct {
	data         []byte
	size         int64
	modTime      time.Time
	etag, ctype  string
	lastModified string
	checked      atomic.Int64 // Unix ns
	// header is the whole answer's header for a request without a query
	// (setHeaders' and writeSmall's), built once. Its slices are shared
	// by every answer and have no spare capacity, so an Add to an
	// answer's header copies instead of writing into them.
	header http.Header
}

// etagOf returns the strong ETag of a file: "MTIME-SIZE", both in hex
// (modification time in Unix nanoseconds).
func etagOf(fi fs.FileInfo) string {
	b := make([]byte, 0, 40)
	b = append(b, '"')
	b = strconv.AppendInt(b, fi.ModTime().UnixNano(), 16)
	b = append(b, '-')
	b = strconv.AppendInt(b, fi.Size(), 16)
	return string(append(b, '"'))
}

// cachedOverhead is about what a cachedFile holds besides its data: the
// struct, its header map and strings, and its sync.Map entry.
const cachedOverhead = 1024

// cost is what c counts against smallCacheBytes.
func (c *cachedFile) cost() int64 { return c.size + cachedOverhead }

// fullHeader returns the header a plain GET of the cached file c at rel
// answers with.
func (h *Handler) fullHeader(rel string, c *cachedFile) http.Header {
	hd := http.Header{}
	h.setHeaders(hd, rel, c.etag, c.ctype, nil)
	hd.Set("Accept-Ranges", "bytes")
	hd.Set("Last-Modified", c.lastModified)
	hd.Set("Content-Length", strconv.Itoa(len(c.data)))
	for k, v := range hd {
		hd[k] = v[:len(v):len(v)]
	}
	return hd
}

// smallCacheBytes caps the cached small files' cost (data and overhead).
// 16 MiB keeps a server fetching 10,000 small files in turn within 64 MiB
// of RSS (spate bench http: 116 MB with 64 MiB, where the garbage
// collector's headroom doubles the cache); files past the cap are answered
// from disk with the same single write.
const smallCacheBytes = 16 << 20

// smallRecheck is how long a cached small file is trusted (a variable
// for tests).
var smallRecheck = time.Second

// New opens dir and returns a Handler serving it under prefix ("/files/").
// Close it to release the directory.
func New(dir, prefix string, o Options) (*Handler, error) {
	for _, p := range o.Immutable {
		if _, err := path.Match(p, ""); err != nil {
			return nil, fmt.Errorf("bad immutable pattern %q: %w", p, err)
		}
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("cannot open the files directory: %w", err)
	}
	if o.MaxRanges <= 0 {
		o.MaxRanges = DefaultMaxRanges
	}
	if o.CompressMin == 0 {
		o.CompressMin = DefaultCompressMin
	}
	return &Handler{root: root, prefix: prefix, opts: o}, nil
}

// Close releases the directory.
func (h *Handler) Close() error { return h.root.Close() }

// ServeHTTP serves GET and HEAD requests for the files under the prefix.
// With Accept-Encoding and no Range, a precompressed sibling or (for
// compressible types) the file compressed on the fly answers; every answer
// says Vary: Accept-Encoding, and each representation has its own ETag.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed: files are read with GET or HEAD", http.StatusMethodNotAllowed)
		return
	}
	rel, dir, ok := h.relPath(r.URL)
	if !ok {
		http.NotFound(w, r)
		return
	}
	if dir {
		h.serveDir(w, r, rel)
		return
	}
	if plainGet(r) && r.Header.Get("Accept-Encoding") == "" {
		if c := h.cached(rel); c != nil {
			hd := w.Header()
			if r.URL.RawQuery == "" && hd["Vary"] == nil {
				// The precomputed header, set without canonicalising
				// or allocating.
				for k, v := range c.header {
					hd[k] = v
				}
				w.WriteHeader(http.StatusOK)
				if r.Method != http.MethodHead {
					w.Write(c.data)
				}
				return
			}
			h.setHeaders(hd, rel, c.etag, c.ctype, r)
			h.writeSmall(w, r, c.data, c.lastModified)
			return
		}
	}
	f, err := h.root.Open(rel)
	if err != nil {
		h.openError(w, r, err)
		return
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		http.Error(w, "cannot read the file", http.StatusInternalServerError)
		return
	}
	if fi.IsDir() {
		if h.opts.Browse {
			http.Redirect(w, r, url.PathEscape(path.Base(rel))+"/", http.StatusMovedPermanently)
			return
		}
		http.Error(w, "a directory: listings are off (spate serve --files-browse)", http.StatusForbidden)
		return
	}
	if !fi.Mode().IsRegular() {
		http.NotFound(w, r)
		return
	}
	hd := w.Header()
	name := path.Base(rel)
	etag := etagOf(fi)
	hd.Set("ETag", etag)
	ctype := mime.TypeByExtension(path.Ext(name))
	if ctype == "" {
		// Sniff as ServeContent would, to know whether it compresses.
		var buf [512]byte
		n, _ := io.ReadFull(f, buf[:])
		ctype = http.DetectContentType(buf[:n])
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			http.Error(w, "cannot read the file", http.StatusInternalServerError)
			return
		}
	}
	h.setHeaders(hd, rel, etag, ctype, r)
	if rg := r.Header.Get("Range"); rg != "" {
		norm, action := normalizeRange(rg, fi.Size(), h.opts.MaxRanges)
		switch action {
		case rangeIgnore:
			r.Header.Del("Range")
		case rangeUnsatisfiable:
			if ir := r.Header.Get("If-Range"); ir == "" || ir == etag || ir == fi.ModTime().UTC().Format(http.TimeFormat) {
				hd.Set("Content-Range", "bytes */"+strconv.FormatInt(fi.Size(), 10))
				http.Error(w, "no range of the file was asked for", http.StatusRequestedRangeNotSatisfiable)
				return
			}
			r.Header.Del("Range") // If-Range does not hold: the whole file
		default:
			r.Header.Set("Range", norm)
		}
	}
	// Ranges apply to the file's own bytes only: a request with a Range
	// gets identity.
	if r.Header.Get("Range") == "" {
		if h.serveEncoded(w, r, rel, name, ctype, etag, fi) {
			return
		}
	}
	if h.serveSmall(w, r, rel, f, fi, etag, ctype) {
		return
	}
	http.ServeContent(w, r, name, fi.ModTime(), f)
}

// smallFile is the largest file serveSmall answers: one read into a
// pooled buffer and one write beat ServeContent's size seeks and its split
// between a sniffed first write and sendfile.
const smallFile = 32 << 10

var smallBufs = sync.Pool{New: func() any { b := make([]byte, smallFile); return &b }}

// plainGet reports whether r is a GET or HEAD without Range or
// conditional headers: one ServeContent would answer with the whole file.
func plainGet(r *http.Request) bool {
	for _, k := range []string{"Range", "If-Match", "If-None-Match", "If-Modified-Since", "If-Unmodified-Since", "If-Range"} {
		if _, ok := r.Header[k]; ok {
			return false
		}
	}
	return true
}

// setHeaders sets the headers every answer for the file at rel has; r nil
// means a request without a query.
func (h *Handler) setHeaders(hd http.Header, rel, etag, ctype string, r *http.Request) {
	hd.Set("ETag", etag)
	hd.Set("Content-Type", ctype)
	hd.Set("X-Content-Type-Options", "nosniff")
	setVary(hd)
	if cc := h.cacheControl(rel); cc != "" {
		hd.Set("Cache-Control", cc)
	}
	disposition := "inline"
	if r != nil && r.URL.RawQuery != "" {
		if _, ok := r.URL.Query()["download"]; ok {
			disposition = "attachment"
		}
	}
	hd.Set("Content-Disposition", contentDisposition(disposition, path.Base(rel)))
}

// serveSmall answers a plain GET or HEAD of a file of at most smallFile
// bytes with one read and one write, as ServeContent would answer it, and
// caches the answer; it reports whether it did.
func (h *Handler) serveSmall(w http.ResponseWriter, r *http.Request, rel string, f *os.File, fi fs.FileInfo, etag, ctype string) bool {
	if fi.Size() > smallFile || !plainGet(r) {
		return false
	}
	bp := smallBufs.Get().(*[]byte)
	defer smallBufs.Put(bp)
	buf := (*bp)[:fi.Size()]
	if _, err := io.ReadFull(f, buf); err != nil {
		// Changed under us: let ServeContent, which reads to the end, answer.
		f.Seek(0, io.SeekStart)
		return false
	}
	lm := fi.ModTime().UTC().Format(http.TimeFormat)
	if h.smallBytes.Load()+fi.Size()+cachedOverhead <= smallCacheBytes {
		c := &cachedFile{data: bytes.Clone(buf), size: fi.Size(), modTime: fi.ModTime(), etag: etag, ctype: ctype, lastModified: lm}
		c.header = h.fullHeader(rel, c)
		c.checked.Store(time.Now().UnixNano())
		if old, loaded := h.small.Swap(rel, c); !loaded {
			h.smallBytes.Add(c.cost())
		} else {
			h.smallBytes.Add(c.cost() - old.(*cachedFile).cost())
		}
	}
	h.writeSmall(w, r, buf, lm)
	return true
}

// cached returns the cached answer of the file at rel, checking it
// against the file once smallRecheck has passed, or nil.
func (h *Handler) cached(rel string) *cachedFile {
	v, ok := h.small.Load(rel)
	if !ok {
		return nil
	}
	c := v.(*cachedFile)
	now := time.Now().UnixNano()
	if now-c.checked.Load() < int64(smallRecheck) {
		return c
	}
	fi, err := h.root.Stat(rel)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() != c.size || !fi.ModTime().Equal(c.modTime) {
		if h.small.CompareAndDelete(rel, c) {
			h.smallBytes.Add(-c.cost())
		}
		return nil
	}
	c.checked.Store(now)
	return c
}

// writeSmall writes a whole small file's answer.
func (h *Handler) writeSmall(w http.ResponseWriter, r *http.Request, data []byte, lastModified string) {
	hd := w.Header()
	hd.Set("Accept-Ranges", "bytes")
	hd.Set("Last-Modified", lastModified)
	hd.Set("Content-Length", strconv.Itoa(len(data)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		w.Write(data)
	}
}

// serveEncoded answers with a compressed representation when the client
// accepts one: a precompressed sibling (rel+".zst", ".br", ".gz", not
// older than the file) as it is stored, else, for a compressible type of
// at least CompressMin bytes, the file compressed on the fly. It reports
// whether it answered.
func (h *Handler) serveEncoded(w http.ResponseWriter, r *http.Request, rel, name, ctype, etag string, fi fs.FileInfo) bool {
	ae := r.Header.Get("Accept-Encoding")
	if ae == "" {
		return false
	}
	q := acceptEncoding(ae)
	c, ok := pick(q, allCodings, func(c coding) bool {
		si, err := h.root.Stat(rel + c.suffix)
		return err == nil && si.Mode().IsRegular() && !si.ModTime().Before(fi.ModTime())
	})
	hd := w.Header()
	if ok {
		sf, err := h.root.Open(rel + c.suffix)
		if err != nil {
			return false
		}
		defer sf.Close()
		si, err := sf.Stat()
		if err != nil {
			return false
		}
		hd.Set("Content-Encoding", c.name)
		hd.Set("ETag", etagFor(etag, c))
		http.ServeContent(w, r, name, si.ModTime(), sf)
		return true
	}
	if h.opts.CompressMin < 0 || fi.Size() < h.opts.CompressMin || !compressible(ctype) {
		return false
	}
	if c, ok = pick(q, liveCodings, func(coding) bool { return true }); !ok {
		return false
	}
	if r.Header.Get("If-Match") != "" || r.Header.Get("If-Unmodified-Since") != "" {
		return false // ServeContent answers those, on the identity body
	}
	tag := etagFor(etag, c)
	hd.Set("ETag", tag)
	hd.Set("Last-Modified", fi.ModTime().UTC().Format(http.TimeFormat))
	inm := r.Header.Get("If-None-Match")
	if ifNoneMatch(inm, tag) || inm == "" && notModifiedSince(r, fi) {
		hd.Del("Content-Type")
		w.WriteHeader(http.StatusNotModified)
		return true
	}
	hd.Set("Content-Encoding", c.name)
	if r.Method == http.MethodHead {
		w.WriteHeader(http.StatusOK)
		return true
	}
	f, err := h.root.Open(rel)
	if err != nil {
		return false
	}
	defer f.Close()
	w.WriteHeader(http.StatusOK)
	compressTo(w, f, c) // an error here is the client's going away
	return true
}

// notModifiedSince reports whether an If-Modified-Since header says the
// client has the file (to the second, as HTTP dates go).
func notModifiedSince(r *http.Request, fi fs.FileInfo) bool {
	ims := r.Header.Get("If-Modified-Since")
	if ims == "" || r.Method != http.MethodGet && r.Method != http.MethodHead {
		return false
	}
	t, err := http.ParseTime(ims)
	if err != nil {
		return false
	}
	return !fi.ModTime().Truncate(time.Second).After(t)
}

// relPath returns the path under the directory that u names, and whether
// it names a directory listing (a trailing '/', with Browse; "." for the
// top), or false if the path is refused.
func (h *Handler) relPath(u *url.URL) (rel string, dir, ok bool) {
	raw := u.EscapedPath()
	lower := strings.ToLower(raw)
	if strings.Contains(lower, "%2f") || strings.Contains(lower, "%5c") || strings.Contains(lower, "%00") {
		return "", false, false
	}
	rel, ok = strings.CutPrefix(u.Path, h.prefix)
	if !ok || strings.ContainsAny(rel, "\x00\\") || !utf8.ValidString(rel) {
		return "", false, false
	}
	if h.opts.Browse {
		if rel == "" {
			return ".", true, true
		}
		if trimmed, ok := strings.CutSuffix(rel, "/"); ok {
			rel, dir = trimmed, true
		}
	}
	if rel == "" {
		return "", false, false
	}
	for seg := range strings.SplitSeq(rel, "/") {
		switch {
		case seg == "", seg == ".", seg == "..":
			return "", false, false
		case seg[0] == '.' && !h.opts.Dotfiles:
			return "", false, false
		}
	}
	return rel, dir, true
}

// dirEntry is one entry of a listing, as JSON gives it.
type dirEntry struct {
	Name    string    `json:"name"`
	Dir     bool      `json:"dir,omitempty"`
	Size    int64     `json:"size"`
	ModTime time.Time `json:"mtime"`
}

// serveDir lists the directory rel: HTML, or JSON when the client asks
// for application/json. Dotfiles are left out unless Options.Dotfiles;
// entries that are neither files nor directories (symbolic links
// included) are not listed.
func (h *Handler) serveDir(w http.ResponseWriter, r *http.Request, rel string) {
	d, err := h.root.Open(rel)
	if err != nil {
		h.openError(w, r, err)
		return
	}
	defer d.Close()
	if fi, err := d.Stat(); err != nil || !fi.IsDir() {
		http.NotFound(w, r)
		return
	}
	des, err := d.ReadDir(-1)
	if err != nil {
		http.Error(w, "cannot list the directory", http.StatusInternalServerError)
		return
	}
	var list []dirEntry
	for _, de := range des {
		if de.Name()[0] == '.' && !h.opts.Dotfiles || !de.Type().IsRegular() && !de.IsDir() {
			continue
		}
		fi, err := de.Info()
		if err != nil {
			continue
		}
		e := dirEntry{Name: de.Name(), Dir: de.IsDir(), ModTime: fi.ModTime().UTC()}
		if !e.Dir {
			e.Size = fi.Size()
		}
		list = append(list, e)
	}
	slices.SortFunc(list, func(a, b dirEntry) int { return strings.Compare(a.Name, b.Name) })
	hd := w.Header()
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Cache-Control", "no-cache")
	if strings.Contains(r.Header.Get("Accept"), "application/json") {
		hd.Set("Content-Type", "application/json")
		if list == nil {
			list = []dirEntry{}
		}
		json.NewEncoder(w).Encode(list)
		return
	}
	hd.Set("Content-Type", "text/html; charset=utf-8")
	hd.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
	title := html.EscapeString("/" + strings.TrimPrefix(path.Clean("/"+rel), "/"))
	var b strings.Builder
	fmt.Fprintf(&b, "<!doctype html>\n<meta charset=utf-8><title>%s</title>\n<style>body{font:14px monospace}td{padding:0 1em}</style>\n<h1>%s</h1>\n<table>\n", title, title)
	if rel != "." {
		b.WriteString("<tr><td><a href=\"../\">../</a></td></tr>\n")
	}
	for _, e := range list {
		href, label, size := url.PathEscape(e.Name), e.Name, strconv.FormatInt(e.Size, 10)
		if e.Dir {
			href, label, size = href+"/", label+"/", "-"
		}
		fmt.Fprintf(&b, "<tr><td><a href=\"%s\">%s</a></td><td>%s</td><td>%s</td></tr>\n",
			html.EscapeString(href), html.EscapeString(label), size, e.ModTime.Format(time.RFC3339))
	}
	b.WriteString("</table>\n")
	io.WriteString(w, b.String())
}

// openError answers a file that cannot be opened: 404 when it is not
// there or lies outside the directory (os.Root's refusal, told apart from
// nothing), 403 when it may not be read.
func (h *Handler) openError(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, fs.ErrPermission) {
		http.Error(w, "the file may not be read", http.StatusForbidden)
		return
	}
	http.NotFound(w, r)
}

// cacheControl returns the Cache-Control of the file at rel.
func (h *Handler) cacheControl(rel string) string {
	cc := h.opts.CacheControl
	for _, p := range h.opts.Immutable {
		if ok, _ := path.Match(p, rel); ok {
			if cc == "" {
				return "public, max-age=31536000, immutable"
			}
			return cc + ", immutable"
		}
	}
	return cc
}

// contentDisposition writes a Content-Disposition for name: the name
// itself when it is plain ASCII, else an ASCII fallback and the UTF-8 name
// as RFC 6266 (RFC 8187) filename*.
func contentDisposition(kind, name string) string {
	plain := true
	for i := 0; i < len(name); i++ {
		if c := name[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			plain = false
			break
		}
	}
	if plain {
		return kind + `; filename="` + name + `"`
	}
	var fallback strings.Builder
	for _, c := range name {
		if c >= 0x20 && c <= 0x7e && c != '"' && c != '\\' {
			fallback.WriteRune(c)
		} else {
			fallback.WriteByte('_')
		}
	}
	return fmt.Sprintf(`%s; filename="%s"; filename*=UTF-8''%s`, kind, fallback.String(), rfc8187(name))
}

// rfc8187 percent-encodes s for an ext-value: attr-char bytes as they are,
// every other byte as %XX.
func rfc8187(s string) string {
	const attr = "!#$&+-.^_`|~"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte(attr, c) >= 0 {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}
