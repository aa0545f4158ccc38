package server

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

// peerConns is the fan-out's HTTP/1.1 client for http:// peers: a request
// is written and its answer read on the goroutine that asks, over a
// kept-alive connection from a small pool per peer. net/http's Transport
// hands each request to a writing goroutine and each answer to a reading
// one (persistConn's writeLoop and readLoop); on a query a node answers in
// a fraction of a millisecond, those two loops were about a quarter of the
// front's CPU in a profile, and each handoff a wake-up on the way of the
// answer. Requests and answers are
// written and parsed by net/http itself (Request.Write, ReadResponse);
// only the connections are managed here. https:// peers go through
// peerClient.
//
// Methods are safe for concurrent use.
type peerConns struct {
	mu   sync.Mutex
	idle map[string][]*peerConn // by host:port, most recently used last
}

// maxIdlePeerConns caps the idle connections kept per peer.
const maxIdlePeerConns = 16

// peerDialTimeout bounds connecting to a peer (the query's context bounds
// it too).
const peerDialTimeout = 10 * time.Second

var directPeers = &peerConns{idle: map[string][]*peerConn{}}

// peerConn is one connection to a peer.
type peerConn struct {
	c    net.Conn
	br   *bufio.Reader
	bw   *bufio.Writer
	host string
}

// do sends req (an http:// request whose body, if any, has GetBody) and
// returns the answer, as http.Client.Do does: the caller reads and closes
// its body, which gives the connection back when the body was read to its
// end. When ctx ends, a request or an answer still on the wire fails. A
// kept-alive connection the peer has closed meanwhile is replaced once.
func (p *peerConns) do(ctx context.Context, req *http.Request) (*http.Response, error) {
	host := req.URL.Host
	for attempt := 0; ; attempt++ {
		var pc *peerConn
		reused := false
		if attempt == 0 {
			pc, reused = p.get(host)
		}
		if pc == nil {
			var err error
			if pc, err = p.dial(ctx, host); err != nil {
				return nil, err
			}
		}
		resp, err := p.roundTrip(ctx, pc, req)
		if err == nil {
			return resp, nil
		}
		pc.c.Close()
		// A connection idle in the pool may have been closed by the
		// peer (its idle timeout, a restart: then all were): the request
		// is read-only, so it is sent again on a new one.
		if !reused || ctx.Err() != nil || req.GetBody == nil && req.Body != nil {
			return nil, err
		}
		p.drop(host)
		if req.GetBody != nil {
			body, gerr := req.GetBody()
			if gerr != nil {
				return nil, err
			}
			req.Body = body
		}
	}
}

// get returns an idle connection to host, or nil.
func (p *peerConns) get(host string) (*peerConn, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	conns := p.idle[host]
	if len(conns) == 0 {
		return nil, false
	}
	pc := conns[len(conns)-1]
	p.idle[host] = conns[:len(conns)-1]
	return pc, true
}

// drop closes the idle connections to host.
func (p *peerConns) drop(host string) {
	p.mu.Lock()
	conns := p.idle[host]
	delete(p.idle, host)
	p.mu.Unlock()
	for _, pc := range conns {
		pc.c.Close()
	}
}

// put keeps pc for the next request to its host, or closes it when the
// pool is full.
func (p *peerConns) put(pc *peerConn) {
	p.mu.Lock()
	if conns := p.idle[pc.host]; len(conns) < maxIdlePeerConns {
		p.idle[pc.host] = append(conns, pc)
		pc = nil
	}
	p.mu.Unlock()
	if pc != nil {
		pc.c.Close()
	}
}

func (p *peerConns) dial(ctx context.Context, host string) (*peerConn, error) {
	d := net.Dialer{Timeout: peerDialTimeout, KeepAlive: 30 * time.Second}
	c, err := d.DialContext(ctx, "tcp", host)
	if err != nil {
		return nil, err
	}
	return &peerConn{c: c, br: bufio.NewReaderSize(c, 32<<10), bw: bufio.NewWriterSize(c, 4<<10), host: host}, nil
}

// roundTrip writes req and reads the answer's header on pc, from p. Until the
// answer's body is closed, ctx ending sets a past deadline on the
// connection, which fails whatever read or write is under way.
func (p *peerConns) roundTrip(ctx context.Context, pc *peerConn, req *http.Request) (*http.Response, error) {
	stop := context.AfterFunc(ctx, func() { pc.c.SetDeadline(time.Unix(1, 0)) })
	fail := func(err error) (*http.Response, error) {
		stop()
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		return nil, err
	}
	if err := req.Write(pc.bw); err != nil {
		return fail(err)
	}
	if err := pc.bw.Flush(); err != nil {
		return fail(err)
	}
	resp, err := http.ReadResponse(pc.br, req)
	if err != nil {
		return fail(err)
	}
	resp.Body = &peerBody{body: resp.Body, pool: p, pc: pc, stop: stop, reuse: !resp.Close}
	return resp, nil
}

// peerBody is an answer's body on a pooled connection.
type peerBody struct {
	body   io.ReadCloser
	pool   *peerConns
	pc     *peerConn
	stop   func() bool
	reuse  bool // the peer keeps the connection open
	eof    bool
	closed bool
}

func (b *peerBody) Read(p []byte) (int, error) {
	if b.closed {
		return 0, errors.New("read on a closed peer answer")
	}
	n, err := b.body.Read(p)
	if err == io.EOF {
		b.eof = true
	}
	return n, err
}

// Close gives the connection back to the pool when the body was read to
// its end, the peer keeps the connection and the request's context has
// not ended; otherwise it closes the connection.
func (b *peerBody) Close() error {
	if b.closed {
		return nil
	}
	b.closed = true
	if !b.eof {
		// A short tail (an error body cut by a limit) is read out
		// rather than losing the connection.
		if n, err := io.Copy(io.Discard, io.LimitReader(b.body, 4<<10)); err == nil && n < 4<<10 {
			b.eof = true
		}
	}
	b.body.Close()
	if b.stop() && b.eof && b.reuse && b.pc.br.Buffered() == 0 {
		b.pool.put(b.pc)
		return nil
	}
	return b.pc.c.Close()
}
