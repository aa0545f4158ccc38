package benchhttp

import (
	"bufio"
	"io"
	"io/fs"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
)

// Suites.
const (
	SuiteResponses = "responses"
	SuiteDownloads = "downloads"
)

// ResponseVariants are the responses suite's handlers, in report order.
// Each answers GET /json with the same JSON document (BodyItems items),
// written piece by piece (801 writes) as a handler rendering a response
// would:
//
//	direct      every piece written to the http.ResponseWriter (net/http's
//	            own buffers, 2 KiB before it switches to chunked and 4 KiB
//	            per connection, stand between it and the socket)
//	flush-each  every piece written and flushed (http.Flusher): one
//	            write(2) per piece, the truly unbuffered handler
//	bufio-4k    the pieces written to a bufio.Writer of 4 KiB (pooled)
//	            over the ResponseWriter, flushed at the end
//	bufio-64k   the same with 64 KiB
//	assembled   the pieces appended to one pooled buffer, then one Write
//	            with Content-Length
//	prebuilt    the document rendered once at start, one Write per
//	            request: the ceiling of a handler that renders nothing
var ResponseVariants = []string{"direct", "flush-each", "bufio-4k", "bufio-64k", "assembled", "prebuilt"}

// DownloadVariants are the downloads suite's servers, in report order.
// Each answers GET /{path} with the file under the directory, with
// Content-Length and Content-Type application/octet-stream:
//
//	copy          io.Copy(w, file): net/http hands the file to the
//	              connection, which uses sendfile(2)
//	bufio-reader  io.Copy(w, bufio.NewReader(file)), the write-ups' buffered
//	              download; bufio.Reader's WriteTo passes the file on, so
//	              this is sendfile(2) too (the syscall counts show it)
//	copybuf-4k    io.CopyBuffer with a 4 KiB buffer, the file and the
//	              writer wrapped so that neither ReadFrom nor WriteTo can
//	              bypass it: read(2) into the buffer, write(2) from it.
//	              (io.CopyBuffer(w, file, buf) unwrapped ignores buf and
//	              is exactly the copy row.)
//	copybuf-64k   the same with 64 KiB
//	copybuf-1m    the same with 1 MiB
//	mmap          the file mapped per request and written from the mapping
//	memory        every file read into memory at start, one Write per
//	              request: the ceiling of a net/http handler
//	spate         spate serve --files: the full server (fileserve under
//	              the server's routes and metrics)
//	nginx         nginx with sendfile and tcp_nopush on, access log off,
//	              one worker per CPU (when an nginx binary is found)
var DownloadVariants = []string{"copy", "bufio-reader", "copybuf-4k", "copybuf-64k", "copybuf-1m", "mmap", "memory", "spate", "nginx"}

// BodyItems is the number of items in the responses suite's document.
const BodyItems = 100

// writeBody renders the responses suite's document to w in small writes:
// seven per item and the commas between items, 801 in all, about 6 KiB.
func writeBody(w io.Writer) error {
	num := make([]byte, 0, 24)
	piece := func(s string) error {
		_, err := io.WriteString(w, s)
		return err
	}
	if err := piece(`{"items":[`); err != nil {
		return err
	}
	for i := range BodyItems {
		if i > 0 {
			if err := piece(","); err != nil {
				return err
			}
		}
		for _, p := range [...]struct {
			s string
			n int
		}{{`{"id":`, i}, {`,"name":"item-`, i}, {`","price":`, 100 + i*37%1000}} {
			if err := piece(p.s); err != nil {
				return err
			}
			num = strconv.AppendInt(num[:0], int64(p.n), 10)
			if _, err := w.Write(num); err != nil {
				return err
			}
		}
		if err := piece(`,"tags":["alpha","beta"]}`); err != nil {
			return err
		}
	}
	return piece("]}\n")
}

// Body returns the responses suite's document.
func Body() []byte {
	var b appendWriter
	writeBody(&b)
	return b
}

// appendWriter collects writes in memory.
type appendWriter []byte

func (a *appendWriter) Write(p []byte) (int, error) {
	*a = append(*a, p...)
	return len(p), nil
}

// WriteString keeps io.WriteString from copying s into a new slice, as
// bufio.Writer and net/http's ResponseWriter do.
func (a *appendWriter) WriteString(s string) (int, error) {
	*a = append(*a, s...)
	return len(s), nil
}

// flushWriter flushes after every write.
type flushWriter struct {
	w http.ResponseWriter
	f http.Flusher
}

func (f flushWriter) Write(p []byte) (int, error) {
	n, err := f.w.Write(p)
	f.f.Flush()
	return n, err
}

func (f flushWriter) WriteString(s string) (int, error) {
	n, err := io.WriteString(f.w, s)
	f.f.Flush()
	return n, err
}

// responseHandler returns the responses suite's handler for variant.
func responseHandler(variant string) http.Handler {
	jsonHeader := func(w http.ResponseWriter) { w.Header()["Content-Type"] = []string{"application/json"} }
	switch variant {
	case "direct":
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			jsonHeader(w)
			writeBody(w)
		})
	case "flush-each":
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			jsonHeader(w)
			writeBody(flushWriter{w, w.(http.Flusher)})
		})
	case "bufio-4k", "bufio-64k":
		size := 4 << 10
		if variant == "bufio-64k" {
			size = 64 << 10
		}
		pool := sync.Pool{New: func() any { return bufio.NewWriterSize(nil, size) }}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			jsonHeader(w)
			bw := pool.Get().(*bufio.Writer)
			bw.Reset(w)
			writeBody(bw)
			bw.Flush()
			bw.Reset(nil)
			pool.Put(bw)
		})
	case "assembled":
		pool := sync.Pool{New: func() any { b := make(appendWriter, 0, 8<<10); return &b }}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b := pool.Get().(*appendWriter)
			*b = (*b)[:0]
			writeBody(b)
			jsonHeader(w)
			w.Header()["Content-Length"] = []string{strconv.Itoa(len(*b))}
			w.Write(*b)
			pool.Put(b)
		})
	case "prebuilt":
		body := Body()
		length := []string{strconv.Itoa(len(body))}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			jsonHeader(w)
			w.Header()["Content-Length"] = length
			w.Write(body)
		})
	}
	return nil
}

// readerOnly and writerOnly hide ReadFrom and WriteTo, so io.CopyBuffer
// really copies through its buffer.
type readerOnly struct{ io.Reader }
type writerOnly struct{ io.Writer }

// downloadHandler returns the downloads suite's handler for variant (not
// spate or nginx, which are whole servers) serving the files of root.
func downloadHandler(variant string, root *os.Root) http.Handler {
	if variant == "memory" {
		return memoryHandler(root)
	}
	var body func(w http.ResponseWriter, f *os.File, size int64) error
	switch variant {
	case "copy":
		body = func(w http.ResponseWriter, f *os.File, _ int64) error {
			_, err := io.Copy(w, f)
			return err
		}
	case "bufio-reader":
		body = func(w http.ResponseWriter, f *os.File, _ int64) error {
			_, err := io.Copy(w, bufio.NewReader(f))
			return err
		}
	case "copybuf-4k", "copybuf-64k", "copybuf-1m":
		size := map[string]int{"copybuf-4k": 4 << 10, "copybuf-64k": 64 << 10, "copybuf-1m": 1 << 20}[variant]
		pool := sync.Pool{New: func() any { b := make([]byte, size); return &b }}
		body = func(w http.ResponseWriter, f *os.File, _ int64) error {
			buf := pool.Get().(*[]byte)
			defer pool.Put(buf)
			_, err := io.CopyBuffer(writerOnly{w}, readerOnly{f}, *buf)
			return err
		}
	case "mmap":
		body = mmapBody
	default:
		return nil
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f, err := root.Open(strings.TrimPrefix(r.URL.Path, "/"))
		if err != nil {
			http.Error(w, err.Error(), http.StatusNotFound)
			return
		}
		defer f.Close()
		fi, err := f.Stat()
		if err != nil || !fi.Mode().IsRegular() {
			http.Error(w, "not a regular file", http.StatusNotFound)
			return
		}
		h := w.Header()
		h["Content-Type"] = []string{"application/octet-stream"}
		h["Content-Length"] = []string{strconv.FormatInt(fi.Size(), 10)}
		body(w, f, fi.Size())
	})
}

// memoryHandler reads every regular file under root into memory and
// answers each with one Write: what net/http gives a handler that does
// no I/O of its own. Files that cannot be read are answered 404.
func memoryHandler(root *os.Root) http.Handler {
	type file struct {
		data   []byte
		length []string
	}
	files := map[string]file{}
	fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		if b, err := root.ReadFile(p); err == nil {
			files["/"+p] = file{b, []string{strconv.Itoa(len(b))}}
		}
		return nil
	})
	octet := []string{"application/octet-stream"}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f, ok := files[r.URL.Path]
		if !ok {
			http.Error(w, "no such file", http.StatusNotFound)
			return
		}
		h := w.Header()
		h["Content-Type"] = octet
		h["Content-Length"] = f.length
		w.Write(f.data)
	})
}
