package server

// Queries fanned out over storage nodes (Config.SelectPeers, spate serve
// --select-peers): the query is split (query.PlanRemote), each peer runs
// its part over its own data, and the answers are merged here as the
// workers of one run are merged. A stats query's peers answer with the
// merged state of their stats pipe, at /internal/select/partial; any other
// query's with their rows, at /select/logsql/query.

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/spate-io/spate/internal/query"
	"github.com/spate-io/spate/internal/segment"
)

// partialHeader names, in an answer merged from peers with
// Config.AllowPartial, the peers that did not answer (their data is
// missing from it).
const partialHeader = "Spate-Partial-Response"

// peerClient is the HTTP client for https:// peers (http:// ones go
// through directPeers): no timeout of its own, the query's context bounds
// each request.
var peerClient = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16, ForceAttemptHTTP2: false}}

// partialBufs holds the buffers of partial states: those a front reads
// its peers' into, and those a node writes its own into. A state of
// millions of groups is tens of MB, and growing a new buffer for each
// (copying and zeroing it) costs the fan-out more than merging.
var partialBufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// putPartialBuf returns buf to partialBufs, unless it is larger than the
// pool should keep between queries.
func putPartialBuf(buf *bytes.Buffer) {
	if buf.Cap() <= 256<<20 {
		buf.Reset()
		partialBufs.Put(buf)
	}
}

// runPeers is run over the select peers.
func (s *Server) runPeers(ctx context.Context, a *selectArgs, q *query.Query, sink query.Sink) (query.Stats, error) {
	rp := query.PlanRemote(q)
	opts := query.Options{
		AccountID: a.tenant.AccountID, ProjectID: a.tenant.ProjectID,
		MaxMemory: s.cfg.QueryMemory, TempDir: s.cfg.TempDir, StoreFields: true, Unordered: true,
		// stream_context's lookups go to every node too.
		Rerun: func(sq *query.Query, sink query.Sink) error {
			_, err := s.runPeers(ctx, a, sq, sink)
			return err
		},
	}
	m, err := rp.NewMerger(opts, sink)
	if err != nil {
		return query.Stats{}, fmt.Errorf("cannot execute query [%s]: %w", q, err)
	}
	path := "/select/logsql/query"
	if rp.Partial {
		path = "/internal/select/partial"
	}
	// The peers' partial states, which the merge reads until Finish.
	var bufsMu sync.Mutex
	var bufs []*bytes.Buffer
	defer func() {
		for _, b := range bufs {
			putPartialBuf(b)
		}
	}()
	form := url.Values{"query": {rp.Remote.String()}}
	if !rp.Partial {
		form.Set(emptyRowsArg, "1")
	}
	formText := form.Encode()
	peers := s.cfg.SelectPeers
	errs := make([]error, len(peers))
	var wg sync.WaitGroup
	for i, peer := range peers {
		ask := func() {
			errs[i] = s.askPeer(ctx, peer, path, formText, &a.tenant, func(body io.Reader) error {
				if !rp.Partial {
					// Rows are pushed as they come: the merge keeps
					// what the pipes after need, not every peer's rows.
					return m.AddRows(body)
				}
				// A state is added only once complete and checked, so
				// that a peer failing half way adds nothing
				// (--allow-partial).
				buf := partialBufs.Get().(*bytes.Buffer)
				bufsMu.Lock()
				bufs = append(bufs, buf)
				bufsMu.Unlock()
				if _, err := buf.ReadFrom(body); err != nil {
					return err
				}
				return m.AddPartial(buf.Bytes())
			})
		}
		if i < len(peers)-1 {
			wg.Go(ask)
		} else {
			// The last peer is asked on this goroutine: one goroutine
			// fewer to start, wake and grow a stack for per query.
			ask()
		}
	}
	wg.Wait()
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		var slow []string
		for i, err := range errs {
			if err != nil {
				slow = append(slow, peers[i])
			}
		}
		return query.Stats{}, &httpError{http.StatusGatewayTimeout, fmt.Errorf("peers %s did not answer within the query's time (--max-query-duration, or the timeout arg)", strings.Join(slow, ", "))}
	}
	if err := ctx.Err(); err != nil {
		return query.Stats{}, err
	}
	// A query's options(allow_partial_response=...) overrides the flag.
	allowPartial := s.cfg.AllowPartial
	if o := q.EffectiveOptions(); o != nil && o.AllowPartialResponse != nil {
		allowPartial = *o.AllowPartialResponse
	}
	var failed []string
	for i, err := range errs {
		if err == nil {
			continue
		}
		var he *httpError
		if errors.As(err, &he) && he.code == http.StatusBadRequest {
			return query.Stats{}, err // the query itself is wrong: every peer says so
		}
		if !allowPartial {
			return query.Stats{}, &httpError{http.StatusBadGateway, fmt.Errorf("%w (spate serve --allow-partial answers without it)", err)}
		}
		s.log.Warn("peer did not answer; the answer leaves its data out (--allow-partial)", "peer", peers[i], "err", err)
		failed = append(failed, fmt.Sprintf("%s: %v", peers[i], err))
	}
	if len(failed) == len(peers) {
		return query.Stats{}, &httpError{http.StatusBadGateway, fmt.Errorf("no peer answered: %s", strings.Join(failed, "; "))}
	}
	a.partial = failed
	st, err := m.Finish()
	a.approx = append(a.approx, st.Approximate...)
	if err != nil && ctx.Err() == nil {
		var he *httpError
		if !errors.As(err, &he) && !errors.Is(err, errClientGone) {
			err = &httpError{http.StatusBadRequest, fmt.Errorf("cannot execute query [%s]: %w", q, err)}
		}
	}
	return st, err
}

// askPeer posts form to peer's path as tenant and hands a 200 answer's
// body to read. A peer's 400 comes back as an httpError of 400 (the query
// is wrong); any other failure names the peer.
func (s *Server) askPeer(ctx context.Context, peer, path, form string, tenant *segment.Tenant, read func(io.Reader) error) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(peer, "/")+path, strings.NewReader(form))
	if err != nil {
		return fmt.Errorf("peer %s: %w", peer, err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if tenant != nil {
		req.Header.Set("AccountID", strconv.FormatUint(uint64(tenant.AccountID), 10))
		req.Header.Set("ProjectID", strconv.FormatUint(uint64(tenant.ProjectID), 10))
	}
	if s.cfg.PeerToken != "" {
		req.Header.Set("Authorization", "Bearer "+s.cfg.PeerToken)
	}
	var resp *http.Response
	if req.URL.Scheme == "http" {
		resp, err = directPeers.do(ctx, req)
	} else {
		resp, err = peerClient.Do(req)
	}
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("peer %s did not answer in time: %w", peer, context.Cause(ctx))
		}
		return fmt.Errorf("peer %s: %w", peer, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
		err := fmt.Errorf("peer %s: %s: %s", peer, resp.Status, bytes.TrimSpace(msg))
		if resp.StatusCode == http.StatusBadRequest {
			return &httpError{http.StatusBadRequest, err}
		}
		return err
	}
	if err := read(resp.Body); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("peer %s did not finish in time: %w", peer, context.Cause(ctx))
		}
		return fmt.Errorf("peer %s: %w", peer, err)
	}
	return nil
}

// handlePartial is /internal/select/partial, which a --select-peers
// server asks a storage node: the query (ending with its first stats pipe)
// run over this node's data, answered with that pipe's merged state.
func (s *Server) handlePartial(ctx context.Context, w http.ResponseWriter, r *http.Request) error {
	a, err := s.parseSelectArgs(r)
	if err != nil {
		return err
	}
	// The state is buffered so that an error is an error status, never a
	// cut stream (which the merge also refuses). The buffer is pooled: a
	// state of a million groups is tens of MB, which a new buffer would
	// grow to by copying.
	buf := partialBufs.Get().(*bytes.Buffer)
	defer putPartialBuf(buf)
	// A front sends its subqueries' results written out; a query sent
	// by hand may still have subqueries, run here over this node alone.
	if err := s.resolveSubqueries(ctx, a, a.q); err != nil {
		return err
	}
	snap, err := segment.OpenSnapshot(s.cfg.DataDir, a.tenant)
	if err != nil {
		return &httpError{http.StatusInternalServerError, fmt.Errorf("cannot read the data directory: %w", err)}
	}
	if _, err := s.runSnapshotOpts(ctx, a, a.q, snap, nil, func(o *query.Options) { o.Partial = buf }); err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	_, err = w.Write(buf.Bytes())
	return err
}

// peerTenantIDs is /select/tenant_ids over the peers: the union of their
// answers.
func (s *Server) peerTenantIDs(ctx context.Context, w http.ResponseWriter, r *http.Request) error {
	type tenantID struct {
		AccountID uint32 `json:"account_id"`
		ProjectID uint32 `json:"project_id"`
	}
	var mu sync.Mutex
	var all []tenantID
	var wg sync.WaitGroup
	errs := make([]error, len(s.cfg.SelectPeers))
	for i, peer := range s.cfg.SelectPeers {
		wg.Go(func() {
			errs[i] = s.askPeer(ctx, peer, "/select/tenant_ids", r.Form.Encode(), nil, func(body io.Reader) error {
				var ts []tenantID
				if err := json.NewDecoder(body).Decode(&ts); err != nil {
					return err
				}
				mu.Lock()
				defer mu.Unlock()
				for _, t := range ts {
					if !slices.Contains(all, t) {
						all = append(all, t)
					}
				}
				return nil
			})
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil && !s.cfg.AllowPartial {
			return &httpError{http.StatusBadGateway, err}
		}
	}
	slices.SortFunc(all, func(a, b tenantID) int {
		return cmp.Or(cmp.Compare(a.AccountID, b.AccountID), cmp.Compare(a.ProjectID, b.ProjectID))
	})
	if all == nil {
		all = []tenantID{}
	}
	b, err := json.Marshal(all)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	_, err = w.Write(b)
	return err
}
