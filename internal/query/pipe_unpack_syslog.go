package query

import (
	"strings"
	"time"

	"github.com/spate-io/spate/internal/syslogline"
)

// PipeUnpackSyslog parses From (default _msg) as a syslog message (RFC
// 5424 or RFC 3164, with structured data, CEF and CEE messages; leading
// spaces, tabs and line breaks skipped) and sets the fields it holds, as
// VictoriaLogs v1.52.1 names them (priority, facility_keyword, level,
// facility, severity, format, timestamp, hostname, app_name, proc_id,
// msg_id, message, ...): "unpack_syslog [if (f)] [[from] f] [offset D]
// [result_prefix p] [keep_original_fields]", in that order.
//
// An RFC 3164 timestamp has no year and no zone: it is read in the UTC year
// of Now (the year before when that puts it more than a day after Now) at
// the zone offset D, else in the run's time zone (Options.TimeZone, the
// local zone by default, as VictoriaLogs reads it in time.Local); an RFC
// 3339 timestamp without a zone is read at the current offset of the run's
// time zone, whatever the offset. Offset is D as written ("" without one),
// OffsetNs its value; Now is the time the query was parsed at, in Unix
// nanoseconds.
type PipeUnpackSyslog struct {
	If                 Filter
	From               string
	Offset             string
	OffsetNs           int64
	ResultPrefix       string
	KeepOriginalFields bool
	Now                int64
}

func (*PipeUnpackSyslog) isPipe() {}

func (p *PipeUnpackSyslog) String() string {
	s := "unpack_syslog" + ifString(p.If) + fromString(p.From)
	if p.Offset != "" {
		s += " offset " + p.Offset
	}
	if p.ResultPrefix != "" {
		s += " result_prefix " + quoteToken(p.ResultPrefix)
	}
	return s + keepSkipString(p.KeepOriginalFields, false)
}

// parseUnpackSyslogPipe parses "unpack_syslog [if (f)] [[from] f] [offset
// D] [result_prefix p] [keep_original_fields]"; VictoriaLogs takes the
// options in this order only.
func (p *parser) parseUnpackSyslogPipe(_ string) (Pipe, error) {
	p.next()
	pu := &PipeUnpackSyslog{From: "_msg", Now: p.now}
	var err error
	if p.isKw("if") {
		if pu.If, err = p.parseIf(); err != nil {
			return nil, err
		}
	}
	if !p.isTrailer() && !p.isKw("offset", "result_prefix", "keep_original_fields") {
		if p.isKw("from") {
			p.next()
		}
		if pu.From, err = p.parseFieldName("field after 'from'"); err != nil {
			return nil, err
		}
	}
	if p.isKw("offset") {
		p.next()
		if pu.OffsetNs, pu.Offset, err = p.parseDurationArg("offset", "the offset of unpack_syslog", "use a duration such as 2h or -5h30m"); err != nil {
			return nil, err
		}
	}
	if p.isKw("result_prefix") {
		p.next()
		if pu.ResultPrefix, err = p.compound(stopsGeneric, "prefix after 'result_prefix'"); err != nil {
			return nil, err
		}
	}
	if p.isKw("keep_original_fields") {
		p.next()
		pu.KeepOriginalFields = true
	}
	return pu, nil
}

func (p *PipeUnpackSyslog) newProcessor(pl *plan, next processor) (processor, error) {
	ifm, err := compileIf(p.If)
	if err != nil {
		return nil, err
	}
	pr := &unpackSyslogProc{ifm: ifm, from: fieldOrMsg(p.From), prefix: p.ResultPrefix, keep: p.KeepOriginalFields, next: next}
	zone := pl.opts.TimeZone
	if zone == nil {
		zone = time.Local
	}
	now := time.Unix(0, p.Now)
	_, off := now.In(zone).Zone()
	pr.sp.ZonelessLocation = time.FixedZone("", off)
	pr.sp.Location = zone
	if p.Offset != "" {
		// As VictoriaLogs: whole seconds east of UTC.
		pr.sp.Location = time.FixedZone("", int(p.OffsetNs/int64(time.Second)))
	}
	pr.sp.Now = now
	pr.sp.Year = now.UTC().Year()
	return pr, nil
}

// unpackSyslogProc implements unpack_syslog.
type unpackSyslogProc struct {
	ifm    matcher
	from   string
	prefix string
	keep   bool
	next   processor

	sp syslogline.Parser
	// names holds the prefixed field names of the current row.
	names arena
	nb    []byte
	// kept marks, with keep, the fields whose name the row already has
	// with a value: looked up before any is set, as VictoriaLogs compares
	// with the fields the row came with.
	kept []bool
}

func (p *unpackSyslogProc) push(r *Row) error {
	if p.ifm != nil && !p.ifm.match(r) {
		return p.next.push(r)
	}
	// The parsed fields alias the value and p.sp, which stay valid
	// during this push.
	p.sp.Parse(strings.TrimLeft(r.Get(p.from), " \t\n\r"))
	fields := p.sp.Fields
	if p.prefix != "" {
		p.names.reset()
		for i := range fields {
			p.nb = append(append(p.nb[:0], p.prefix...), fields[i].Name...)
			fields[i].Name = p.names.add(p.nb)
		}
	}
	if p.keep {
		p.kept = p.kept[:0]
		for _, f := range fields {
			p.kept = append(p.kept, r.Get(f.Name) != "")
		}
	}
	for i, f := range fields {
		if p.keep && p.kept[i] {
			continue
		}
		r.Set(f.Name, f.Value)
	}
	return p.next.push(r)
}

func (p *unpackSyslogProc) flush() error { return p.next.flush() }
