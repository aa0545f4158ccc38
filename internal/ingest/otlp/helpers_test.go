package otlp

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/spate-io/spate/internal/ingest"
	"google.golang.org/protobuf/encoding/protowire"
)

// pb is a protobuf message being built: an encoder for the tests.
type pb []byte

func (m pb) str(n protowire.Number, s string) pb {
	m = protowire.AppendTag(m, n, protowire.BytesType)
	return protowire.AppendString(m, s)
}

func (m pb) bytes(n protowire.Number, b []byte) pb {
	m = protowire.AppendTag(m, n, protowire.BytesType)
	return protowire.AppendBytes(m, b)
}

func (m pb) msg(n protowire.Number, sub pb) pb { return m.bytes(n, sub) }

func (m pb) varint(n protowire.Number, v uint64) pb {
	m = protowire.AppendTag(m, n, protowire.VarintType)
	return protowire.AppendVarint(m, v)
}

func (m pb) fixed64(n protowire.Number, v uint64) pb {
	m = protowire.AppendTag(m, n, protowire.Fixed64Type)
	return protowire.AppendFixed64(m, v)
}

func (m pb) fixed32(n protowire.Number, v uint32) pb {
	m = protowire.AppendTag(m, n, protowire.Fixed32Type)
	return protowire.AppendFixed32(m, v)
}

// AnyValues.
func sv(s string) pb       { return pb(nil).str(1, s) }
func bv(b bool) pb         { return pb(nil).varint(2, protowire.EncodeBool(b)) }
func iv(i int64) pb        { return pb(nil).varint(3, uint64(i)) }
func dv(f float64) pb      { return pb(nil).fixed64(4, math.Float64bits(f)) }
func byv(b []byte) pb      { return pb(nil).bytes(7, b) }
func kv(k string, v pb) pb { return pb(nil).str(1, k).msg(2, v) }

func av(vals ...pb) pb {
	var a pb
	for _, v := range vals {
		a = a.msg(1, v)
	}
	return pb(nil).msg(5, a)
}

func kvl(kvs ...pb) pb {
	var l pb
	for _, x := range kvs {
		l = l.msg(1, x)
	}
	return pb(nil).msg(6, l)
}

// Messages.

func request(rls ...pb) pb {
	var m pb
	for _, rl := range rls {
		m = m.msg(1, rl)
	}
	return m
}

// resourceLogs: resource is nil for none; pass pb{} for an empty one.
func resourceLogs(resource pb, sls ...pb) pb {
	var m pb
	if resource != nil {
		m = m.msg(1, resource)
	}
	for _, sl := range sls {
		m = m.msg(2, sl)
	}
	return m
}

func attrs(n protowire.Number, kvs ...pb) pb {
	var m pb
	for _, x := range kvs {
		m = m.msg(n, x)
	}
	return m
}

func scopeLogs(scope pb, lrs ...pb) pb {
	var m pb
	if scope != nil {
		m = m.msg(1, scope)
	}
	for _, lr := range lrs {
		m = m.msg(2, lr)
	}
	return m
}

// rec builds a LogRecord: time, then body (nil: none), then attributes.
func rec(t uint64, body pb, kvs ...pb) pb {
	var m pb
	if t != 0 {
		m = m.fixed64(1, t)
	}
	if body != nil {
		m = m.msg(5, body)
	}
	return append(m, attrs(6, kvs...)...)
}

// rowText is a Row as text: "time [stream] name=value ...", values
// quoted.
func rowText(r *ingest.Row) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d [%d]", r.Time, r.Stream)
	for _, f := range r.Fields {
		fmt.Fprintf(&b, " %s=%q", f.Name, f.Value)
	}
	return b.String()
}

// rowsOf returns the rows of req as text.
func rowsOf(t testing.TB, req *Request) []string {
	t.Helper()
	var out []string
	if err := req.Rows(func(r *ingest.Row) error {
		out = append(out, rowText(r))
		return nil
	}); err != nil {
		t.Fatalf("Rows: %v", err)
	}
	if len(out) != req.Records() {
		t.Fatalf("Rows emitted %d rows, Records says %d", len(out), req.Records())
	}
	return out
}

func decodeRows(t testing.TB, body []byte) []string {
	t.Helper()
	req, err := DecodeProtobuf(body)
	if err != nil {
		t.Fatalf("DecodeProtobuf: %v", err)
	}
	return rowsOf(t, req)
}

func checkRows(t *testing.T, got []string, want ...string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
