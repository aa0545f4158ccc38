package query

import (
	"strconv"

	"github.com/cespare/xxhash/v2"
)

// PipeHash stores a hash of Field's value in Result (default _msg):
// "hash(f) [as] r". The hash is VictoriaLogs': xxhash64 of the value's
// bytes, its low 53 bits (so it is exact as a float64), as a decimal
// integer. A missing field hashes as "".
type PipeHash struct{ Field, Result string }

func (*PipeHash) isPipe() {}

func (p *PipeHash) String() string {
	return "hash(" + quoteToken(p.Field) + ") as " + quoteToken(p.Result)
}

// parseHashPipe parses "hash(f) [as] [r]" (also "hash f").
func (p *parser) parseHashPipe(_ string) (Pipe, error) {
	field, result, err := p.parseFieldToResult()
	if err != nil {
		return nil, err
	}
	return &PipeHash{Field: field, Result: result}, nil
}

func (p *PipeHash) newProcessor(_ *plan, next processor) (processor, error) {
	return &hashProc{field: p.Field, result: p.Result, next: next}, nil
}

type hashProc struct {
	field, result string
	next          processor
	buf           []byte
}

func (p *hashProc) push(r *Row) error {
	p.buf = strconv.AppendUint(p.buf[:0], valueHash(r.Get(p.field)), 10)
	r.Set(p.result, unsafeString(p.buf))
	return p.next.push(r)
}

func (p *hashProc) flush() error { return p.next.flush() }

// valueHash is the hash pipe's number for v.
func valueHash(v string) uint64 { return xxhash.Sum64String(v) & (1<<53 - 1) }
