package query

import (
	"math"
	"strconv"
)

// PipeGenerateSequence ignores its input and emits N rows, each with the
// one field _msg set to 0, 1, ..., N-1 in that order: "generate_sequence
// N". As in VictoriaLogs v1.52.1, N is a number literal (1e3, 1K, 0x10,
// 1_000; a fraction is cut: 2.7 is 2) of at least 1. The rows come when
// the input ends (spate stops reading at its first row), and stop early
// when a later pipe needs no more or the run is cancelled.
type PipeGenerateSequence struct{ N uint64 }

func (*PipeGenerateSequence) isPipe() {}

func (p *PipeGenerateSequence) String() string {
	return "generate_sequence " + strconv.FormatUint(p.N, 10)
}

// parseGenerateSequencePipe parses "generate_sequence N".
func (p *parser) parseGenerateSequencePipe(_ string) (Pipe, error) {
	p.next()
	pos := p.cur().pos
	if p.atEOF() || !isNumberPrefixLit(p.cur().text) {
		return nil, p.errorHint(pos, "write generate_sequence N, N a number such as 10",
			"missing the number of rows after 'generate_sequence'; got %s", p.describe())
	}
	s, err := p.compound(stopsGeneric, "number after 'generate_sequence'")
	if err != nil {
		return nil, err
	}
	f, ok := parseNumberLit(s)
	if !ok {
		return nil, p.errorHint(pos, "write generate_sequence N, N a number such as 10", "cannot parse %q as the number of generate_sequence", s)
	}
	if !(f >= 1) {
		return nil, p.errorf(pos, "the number of generate_sequence must be 1 or more; got %s", s)
	}
	n := uint64(math.MaxUint64)
	if f < math.MaxUint64 {
		n = uint64(f)
	}
	return &PipeGenerateSequence{N: n}, nil
}

func (p *PipeGenerateSequence) newProcessor(pl *plan, next processor) (processor, error) {
	return &generateSequenceProc{n: p.N, done: pl.done, next: next}, nil
}

// generateSequenceProc implements generate_sequence. As the query's first
// pipe that needs all rows it runs after the workers, in order (like
// limit): its first row stops the reading.
type generateSequenceProc struct {
	n    uint64
	done <-chan struct{} // the run's cancellation; nil: none
	next processor
	row  Row
	buf  []byte
}

func (g *generateSequenceProc) push(*Row) error { return errStop }

func (g *generateSequenceProc) flush() error {
	for i := uint64(0); i < g.n; i++ {
		if i%4096 == 0 && g.cancelled() {
			break
		}
		g.buf = strconv.AppendUint(g.buf[:0], i, 10)
		g.row.Reset()
		g.row.Set("_msg", unsafeString(g.buf))
		if err := g.next.push(&g.row); err != nil {
			if err == errStop {
				break
			}
			return err
		}
	}
	return g.next.flush()
}

func (g *generateSequenceProc) cancelled() bool {
	select {
	case <-g.done:
		return true
	default:
		return false
	}
}
