package server

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/spate-io/spate/internal/ingest"
	"github.com/spate-io/spate/internal/ingest/esbulk"
)

// esVersion is the Elasticsearch version the probes report, as
// VictoriaLogs reports it by default (-elasticsearch.version): shippers
// pick their request format from its major version.
const esVersion = "8.9.0"

// handleElasticsearch serves /insert/elasticsearch/: the bulk API
// (/_bulk and /{index}/_bulk) and the probes shippers send before it
// (GET or HEAD of the root, _license, index templates, ILM policies,
// ingest pipelines, nodes, Logstash APIs), answered as VictoriaLogs answers
// them. Every answer carries X-Elastic-Product, without which the
// Elasticsearch 8 clients refuse it.
func (s *Server) handleElasticsearch(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Elastic-Product", "Elasticsearch")
	rest := strings.TrimPrefix(r.URL.Path, "/insert/elasticsearch")
	rest = strings.Trim(rest, "/")
	switch {
	case rest == "_bulk" || strings.HasSuffix(rest, "/_bulk"):
		s.handleESBulk(w, r, strings.TrimSuffix(strings.TrimSuffix(rest, "_bulk"), "/"))
		return
	case rest == "":
		w.Header().Set("Content-Type", "application/json")
		if r.Method == http.MethodHead {
			return
		}
		fmt.Fprintf(w, `{"name":"spate","cluster_name":"spate","version":{"number":%q,"build_flavor":"default","lucene_version":"9.7.0","minimum_wire_compatibility_version":"7.17.0","minimum_index_compatibility_version":"7.0.0"},"tagline":"You Know, for Search"}`+"\n", esVersion)
		return
	case rest == "_license":
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"license":{"uid":"spate","type":"oss","status":"active","expiry_date_in_millis":4000000000000}}`+"\n")
		return
	}
	for _, p := range []string{"_ilm/", "_index_template", "_ingest/", "_nodes", "_rollup", "logstash", "_logstash", "_template"} {
		if strings.HasPrefix(rest, p) || rest+"/" == p {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, "{}\n")
			return
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusNotFound)
	w.Write(esbulk.AppendError(nil, http.StatusNotFound, "illegal_argument_exception",
		fmt.Sprintf("no endpoint %s: spate serves /insert/elasticsearch/_bulk and the probes shippers make before it", r.URL.Path)))
}

// handleESBulk stores the documents of a bulk body and answers item by
// item. Its Content-Type is not checked (VictoriaLogs does not either;
// the 8.x clients send application/vnd.elasticsearch+x-ndjson). A
// document that is not a JSON object, an empty one, and the
// delete and update actions are errors in their own items; the other
// items are stored. A request that fails as a whole (429 before any of it
// is read, 413, a malformed action line) gets Elasticsearch's error body.
// index is the index of /{index}/_bulk, the items' default _index.
func (s *Server) handleESBulk(w http.ResponseWriter, r *http.Request, index string) {
	start := time.Now()
	var br *esbulk.Reader
	defer func() {
		if br != nil {
			br.Reset(nil)
			esReaders.Put(br)
		}
	}()
	spec := insertSpec{
		allErrors: true,
		lines: func(b io.Reader, _ *ingest.Params) (io.Reader, error) {
			if br, _ = esReaders.Get().(*esbulk.Reader); br != nil {
				br.Reset(b)
			} else {
				br = esbulk.NewReader(b)
			}
			return br, nil
		},
	}
	s.serveProtocol(w, r, &spec, "POST, PUT", func(code int, rep *insertReport) {
		w.Header().Set("Content-Type", "application/json")
		var items []esbulk.Item
		if br != nil {
			items = br.Items()
		}
		if br == nil || br.Syntax() != nil || code == http.StatusTooManyRequests ||
			code == http.StatusRequestEntityTooLarge || (code >= 400 && len(items) == 0) {
			// The request failed as a whole.
			if code == http.StatusOK {
				code = http.StatusBadRequest
			}
			typ := "illegal_argument_exception"
			switch code {
			case http.StatusTooManyRequests, http.StatusServiceUnavailable:
				typ = "es_rejected_execution_exception"
			case http.StatusRequestEntityTooLarge:
				typ = "content_too_long_exception"
			}
			msg := rep.Error
			if msg == "" {
				msg = "no items: send action and document lines"
			}
			w.WriteHeader(code)
			w.Write(esbulk.AppendError(nil, code, typ, msg))
			return
		}
		out := esOutcomes(items, rep, code)
		if index != "" {
			for i := range items {
				if items[i].Index == "" {
					items[i].Index = index
				}
			}
		}
		w.WriteHeader(http.StatusOK)
		bp, _ := esResponses.Get().(*[]byte)
		if bp == nil {
			bp = new([]byte)
		}
		*bp = esbulk.AppendResponse((*bp)[:0], time.Since(start).Milliseconds(), items, out)
		w.Write(*bp)
		if cap(*bp) <= maxPooledESResponse {
			esResponses.Put(bp)
		}
	})
}

// esReaders and esResponses keep the bulk readers (a 64 KiB buffer and
// the items' array each) and response buffers of requests answered, for
// the next ones: a bulk of 1 MiB has thousands of items.
var (
	esReaders   sync.Pool
	esResponses sync.Pool
)

// maxPooledESResponse bounds the response buffers kept: a huge bulk's
// is left to the GC.
const maxPooledESResponse = 4 << 20

// esOutcomes says what became of each item: line k+1 of the lines the
// pipeline was given is item k.
func esOutcomes(items []esbulk.Item, rep *insertReport, code int) []esbulk.Outcome {
	out := make([]esbulk.Outcome, len(items))
	bad := map[int64]string{}
	for _, e := range rep.Errors {
		bad[e.Line] = e.Error
	}
	for i, it := range items {
		line := int64(i + 1)
		o := &out[i]
		switch {
		case it.Err != "":
			o.Status, o.Type, o.Reason = http.StatusBadRequest, "illegal_argument_exception", it.Err
			if it.Op == esbulk.Create || it.Op == esbulk.Index {
				o.Type = "document_parsing_exception"
			}
		case bad[line] != "":
			o.Status, o.Type, o.Reason = http.StatusBadRequest, "document_parsing_exception", "cannot store the document: "+bad[line]
		case line <= rep.Lines:
			o.Status = http.StatusCreated
		default:
			// Not reached: the request stopped before it.
			o.Status, o.Type, o.Reason = http.StatusServiceUnavailable, "es_rejected_execution_exception", rep.Error
			if code == http.StatusServiceUnavailable || code == http.StatusTooManyRequests {
				o.Status = http.StatusTooManyRequests
			}
		}
	}
	return out
}
