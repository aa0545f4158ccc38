package otlp

import (
	"bytes"
	"encoding/base64"
	"math"
	"strconv"

	"google.golang.org/protobuf/encoding/protowire"
)

// The JSON that VictoriaLogs stores for an array_value (it builds it with
// fastjson): nested arrays as arrays, kvlists as objects (a repeated key
// keeps its first place and takes its last value), an empty AnyValue as
// null, ints in decimal, doubles in strconv's shortest 'g' form (NaN and
// +Inf as they are, not valid JSON), bytes as base64 strings, strings as
// fastjson quotes them (see appendJSONString).

// arrayJSON walks ArrayValue{repeated AnyValue values = 1} and, unless
// checking, appends it to buf as JSON.
func (d *decoder) arrayJSON(b []byte, depth int) error {
	if depth > MaxDepth {
		return ErrDepth
	}
	if !d.check {
		d.buf = append(d.buf, '[')
	}
	var f field
	var err error
	for i := 0; len(b) > 0; {
		if !f.fast(&b) {
			if b, err = nextSlow(b, &f); err != nil {
				return err
			}
		}
		if f.num != 1 {
			continue
		}
		if f.typ != protowire.BytesType {
			return wrongType("values", &f)
		}
		if i > 0 && !d.check {
			d.buf = append(d.buf, ',')
		}
		if err := d.anyJSON(f.data, depth); err != nil {
			return err
		}
		i++
	}
	if !d.check {
		d.buf = append(d.buf, ']')
	}
	return nil
}

// anyJSON walks AnyValue b as an array element or object member: its
// first value counts, as VictoriaLogs reads it (the rest is only checked
// to be well-formed fields).
func (d *decoder) anyJSON(b []byte, depth int) error {
	var f field
	var err error
	done := false
	for len(b) > 0 {
		if !f.fast(&b) {
			if b, err = nextSlow(b, &f); err != nil {
				return err
			}
		}
		if done {
			continue
		}
		switch f.num {
		case 1:
			if f.typ != protowire.BytesType {
				return wrongType("string_value", &f)
			}
			if !d.check {
				d.buf = appendJSONString(d.buf, f.data)
			}
		case 2:
			if f.typ != protowire.VarintType || f.u > 1 {
				return wrongType("bool_value", &f)
			}
			if !d.check {
				d.buf = strconv.AppendBool(d.buf, f.u == 1)
			}
		case 3:
			if f.typ != protowire.VarintType {
				return wrongType("int_value", &f)
			}
			if !d.check {
				d.buf = strconv.AppendInt(d.buf, int64(f.u), 10)
			}
		case 4:
			if f.typ != protowire.Fixed64Type {
				return wrongType("double_value", &f)
			}
			if !d.check {
				d.buf = strconv.AppendFloat(d.buf, math.Float64frombits(f.u), 'g', -1, 64)
			}
		case 5:
			if f.typ != protowire.BytesType {
				return wrongType("array_value", &f)
			}
			if err := d.arrayJSON(f.data, depth+1); err != nil {
				return err
			}
		case 6:
			if f.typ != protowire.BytesType {
				return wrongType("kvlist_value", &f)
			}
			if err := d.objectJSON(f.data, depth+1); err != nil {
				return err
			}
		case 7:
			if f.typ != protowire.BytesType {
				return wrongType("bytes_value", &f)
			}
			if !d.check {
				d.buf = append(d.buf, '"')
				d.buf = base64.StdEncoding.AppendEncode(d.buf, f.data)
				d.buf = append(d.buf, '"')
			}
		default:
			continue
		}
		done = true
	}
	if !done && !d.check {
		d.buf = append(d.buf, "null"...)
	}
	return nil
}

// objectJSON walks KeyValueList{repeated KeyValue values = 1} and, unless
// checking, appends it to buf as a JSON object. Members without a key or
// a value are left out; a repeated key keeps the place of its first
// member and the value of its last (fastjson's Object.Set).
func (d *decoder) objectJSON(b []byte, depth int) error {
	if depth > MaxDepth {
		return ErrDepth
	}
	start := len(d.kvs)
	var f field
	var err error
	for len(b) > 0 {
		if !f.fast(&b) {
			if b, err = nextSlow(b, &f); err != nil {
				return err
			}
		}
		if f.num != 1 {
			continue
		}
		if f.typ != protowire.BytesType {
			return wrongType("values", &f)
		}
		key, val, ok, err := splitKeyValue(f.data)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		if d.check {
			if err := d.anyJSON(val, depth); err != nil {
				return err
			}
		} else {
			d.kvs = append(d.kvs, member{key, val})
		}
	}
	if d.check {
		return nil
	}
	// items stays valid while nested objects grow d.kvs: they only append
	// after it, and a new backing array leaves the old one as it was.
	items := d.kvs[start:]
	var places map[string][2]int // first and last index of a key
	if len(items) > 16 {
		places = make(map[string][2]int, len(items))
		for i, it := range items {
			p, ok := places[str(it.key)]
			if !ok {
				p[0] = i
			}
			p[1] = i
			places[str(it.key)] = p
		}
	}
	d.buf = append(d.buf, '{')
	n := 0
	for i, it := range items {
		j := i // the member whose value goes here
		if places != nil {
			p := places[str(it.key)]
			if p[0] != i {
				continue
			}
			j = p[1]
		} else {
			dup := false
			for _, prev := range items[:i] {
				if bytes.Equal(prev.key, it.key) {
					dup = true
					break
				}
			}
			if dup {
				continue
			}
			for k := i + 1; k < len(items); k++ {
				if bytes.Equal(items[k].key, it.key) {
					j = k
				}
			}
		}
		if n > 0 {
			d.buf = append(d.buf, ',')
		}
		n++
		d.buf = appendJSONString(d.buf, it.key)
		d.buf = append(d.buf, ':')
		if err := d.anyJSON(items[j].val, depth); err != nil {
			return err
		}
	}
	d.buf = append(d.buf, '}')
	// The values of repeated keys that lost to a later member were not
	// rendered: check them as DecodeProtobuf does, so that Rows fails
	// wherever the check fails (Unchecked requests rely on it).
	for i, it := range items {
		last := true
		if places != nil {
			last = places[str(it.key)][1] == i
		} else {
			for _, later := range items[i+1:] {
				if bytes.Equal(later.key, it.key) {
					last = false
					break
				}
			}
		}
		if !last {
			d.check = true
			err := d.anyJSON(it.val, depth)
			d.check = false
			if err != nil {
				return err
			}
		}
	}
	clear(d.kvs[start:])
	d.kvs = d.kvs[:start]
	return nil
}

// appendJSONString quotes s as fastjson does: as it is when it holds no
// '"', '\\' or control byte, else with strconv.AppendQuote (Go escapes:
// \x01, \u2028, invalid UTF-8 as \xff; printable non-ASCII as is).
func appendJSONString(dst, s []byte) []byte {
	for _, c := range s {
		if c < 0x20 || c == '"' || c == '\\' {
			return strconv.AppendQuote(dst, str(s))
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}
