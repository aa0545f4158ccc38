package query

import (
	"bytes"
	"math"
	"net/netip"
	"strconv"
	"strings"
	"unicode/utf8"
)

// This file holds the filter functions that compare a value with bounds or
// with another field: len_range, string_range, ipv4_range, eq_field,
// le_field and lt_field, each as VictoriaLogs v1.52.1 defines it (its
// filter_len_range.go, filter_string_range.go, filter_ipv4_range.go,
// filter_eq_field.go and filter_le_field.go): type, String, parsing and
// matching.

// FilterLenRange matches values of Min to Max characters (Unicode code
// points), both included: "len_range(5, 10)". A row without the field has
// the empty value, of length 0.
type FilterLenRange struct {
	Field    string
	Min, Max uint64
}

// FilterStringRange matches values v with Lo <= v < Hi as byte strings:
// "string_range(A, M)".
type FilterStringRange struct {
	Field  string
	Lo, Hi string
}

// FilterIPv4Range matches values that are IPv4 addresses from Lo to Hi,
// both included: "ipv4_range(10.0.0.0, 10.0.0.255)", a CIDR
// "ipv4_range(10.0.0.0/8)" or one address "ipv4_range(10.0.0.1)". Args are
// the arguments as written, for String().
type FilterIPv4Range struct {
	Field  string
	Lo, Hi uint32
	Args   []string
}

// FilterFieldCompare compares a field's value with another field's in the
// same row: Op "eq" (eq_field: equal strings), "le" (le_field: less or
// equal) or "lt" (lt_field: less). le and lt compare numerically when both
// values are numbers as the range filters read them (mathNumber), as byte
// strings otherwise.
type FilterFieldCompare struct {
	Field, Other string
	Op           string
}

func (*FilterLenRange) isFilter()     {}
func (*FilterStringRange) isFilter()  {}
func (*FilterIPv4Range) isFilter()    {}
func (*FilterFieldCompare) isFilter() {}

func (f *FilterLenRange) String() string {
	return leafField(f.Field) + "len_range(" + strconv.FormatUint(f.Min, 10) + ", " + lenBoundText(f.Max) + ")"
}

func lenBoundText(n uint64) string {
	if n == math.MaxUint64 {
		return "inf"
	}
	return strconv.FormatUint(n, 10)
}

func (f *FilterStringRange) String() string {
	return leafField(f.Field) + "string_range(" + joinTokens([]string{f.Lo, f.Hi}) + ")"
}

func (f *FilterIPv4Range) String() string {
	return leafField(f.Field) + "ipv4_range(" + strings.Join(f.Args, ", ") + ")"
}

func (f *FilterFieldCompare) String() string {
	return leafField(f.Field) + f.Op + "_field(" + quoteToken(f.Other) + ")"
}

// parseBoundFilter builds one of this file's filters on field from the
// arguments of name(...), or returns an error message.
func parseBoundFilter(field, name string, args []string) (Filter, string) {
	switch name {
	case "len_range":
		if len(args) != 2 {
			return nil, "len_range() needs two arguments, the least and the greatest length: len_range(5, 10)"
		}
		lo, ok1 := parseLenBound(args[0])
		hi, ok2 := parseLenBound(args[1])
		if !ok1 || !ok2 {
			return nil, "the bounds of len_range() are numbers of characters (or inf): len_range(5, 10)"
		}
		return &FilterLenRange{Field: field, Min: lo, Max: hi}, ""
	case "string_range":
		if len(args) != 2 {
			return nil, "string_range() needs two arguments, the first value in and the first value past the range: string_range(A, M)"
		}
		return &FilterStringRange{Field: field, Lo: args[0], Hi: args[1]}, ""
	case "ipv4_range":
		f := &FilterIPv4Range{Field: field, Args: args}
		switch len(args) {
		case 1:
			lo, hi, ok := parseIPv4CIDR(args[0])
			if !ok {
				return nil, "cannot read " + strconv.Quote(args[0]) + " as an IPv4 address or CIDR: ipv4_range(10.0.0.0/8)"
			}
			f.Lo, f.Hi = lo, hi
		case 2:
			lo, ok1 := parseIPv4Lit(args[0])
			hi, ok2 := parseIPv4Lit(args[1])
			if !ok1 || !ok2 {
				return nil, "the bounds of ipv4_range() are IPv4 addresses: ipv4_range(10.0.0.0, 10.0.0.255)"
			}
			f.Lo, f.Hi = lo, hi
		default:
			return nil, "ipv4_range() takes two addresses or one CIDR: ipv4_range(10.0.0.0, 10.0.0.255), ipv4_range(10.0.0.0/8)"
		}
		return f, ""
	case "ipv6_range":
		f := &FilterIPv6Range{Field: field, Args: args}
		var ok bool
		switch len(args) {
		case 1:
			f.Lo, f.Hi, ok = parseIPv6CIDR(args[0])
		case 2:
			var ok2 bool
			f.Lo, ok = parseIPv6(args[0])
			f.Hi, ok2 = parseIPv6(args[1])
			ok = ok && ok2
		default:
			return nil, "ipv6_range() takes two addresses or one CIDR: ipv6_range(::1, ::ff), ipv6_range(2001:db8::/32)"
		}
		if !ok {
			return nil, "cannot read the arguments of ipv6_range() as IP addresses or a CIDR: ipv6_range(2001:db8::/32)"
		}
		return f, ""
	case "eq_field", "le_field", "lt_field":
		if len(args) != 1 || args[0] == "" {
			return nil, name + "() needs the name of the other field: " + name + "(other)"
		}
		return &FilterFieldCompare{Field: field, Other: args[0], Op: strings.TrimSuffix(name, "_field")}, ""
	}
	return nil, "BUG: parseBoundFilter(" + name + ")"
}

// parseLenBound reads a bound of len_range: decimal digits (with '_'
// separators) or inf.
func parseLenBound(s string) (uint64, bool) {
	if strings.EqualFold(s, "inf") {
		return math.MaxUint64, true
	}
	return parseUintDigitsLit(s)
}

// parseIPv4CIDR reads an IPv4 address ("10.0.0.1": the range of that one)
// or a CIDR ("10.0.0.0/8": the first and last address of it).
func parseIPv4CIDR(s string) (lo, hi uint32, ok bool) {
	ip, bitsText, cidr := strings.Cut(s, "/")
	n, ok := parseIPv4Lit(ip)
	if !ok {
		return 0, 0, false
	}
	if !cidr {
		return n, n, true
	}
	bits, err := strconv.Atoi(bitsText)
	if err != nil || bits < 0 || bits > 32 {
		return 0, 0, false
	}
	mask := uint32(0)
	if bits > 0 {
		mask = ^uint32(0) << (32 - bits)
	}
	return n & mask, n&mask | ^mask, true
}

type matchLenRange struct{ f FilterLenRange }

func (m *matchLenRange) match(r *Row) bool {
	n := uint64(utf8.RuneCountInString(r.Get(m.f.Field)))
	return n >= m.f.Min && n <= m.f.Max
}

type matchStringRange struct{ f FilterStringRange }

func (m *matchStringRange) match(r *Row) bool {
	v := r.Get(m.f.Field)
	return v >= m.f.Lo && v < m.f.Hi
}

type matchIPv4Range struct{ f FilterIPv4Range }

func (m *matchIPv4Range) match(r *Row) bool {
	n, ok := parseIPv4Lit(r.Get(m.f.Field))
	return ok && n >= m.f.Lo && n <= m.f.Hi
}

type matchFieldCompare struct{ f FilterFieldCompare }

func (m *matchFieldCompare) match(r *Row) bool {
	if m.f.Field == m.f.Other {
		return m.f.Op != "lt"
	}
	a, b := r.Get(m.f.Field), r.Get(m.f.Other)
	if m.f.Op == "eq" {
		return a == b
	}
	if fa, ok := mathNumber(a); ok {
		if fb, ok := mathNumber(b); ok {
			if m.f.Op == "lt" {
				return fa < fb
			}
			return fa <= fb
		}
	}
	if m.f.Op == "lt" {
		return a < b
	}
	return a <= b
}

// FilterIPv6Range matches values that are IP addresses (IPv6, or IPv4 as
// its IPv4-mapped IPv6 form) from Lo to Hi, both included:
// "ipv6_range(::1, ::ff)", a CIDR "ipv6_range(2001:db8::/32)" or one
// address. Args are the arguments as written, for String().
type FilterIPv6Range struct {
	Field  string
	Lo, Hi [16]byte
	Args   []string
}

func (*FilterIPv6Range) isFilter() {}

func (f *FilterIPv6Range) String() string {
	return leafField(f.Field) + "ipv6_range(" + joinTokens(f.Args) + ")"
}

// parseIPv6 reads an address as VictoriaLogs' tryParseIPv6 does: what
// netip.ParseAddr reads, of 2 to 45 bytes, as 16 bytes.
func parseIPv6(s string) ([16]byte, bool) {
	if len(s) < 2 || len(s) > 45 {
		return [16]byte{}, false
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return [16]byte{}, false
	}
	return a.As16(), true
}

// parseIPv6CIDR reads an address (the range of that one) or an address
// and a mask of 0 to 128 bits over its 16 bytes.
func parseIPv6CIDR(s string) (lo, hi [16]byte, ok bool) {
	ip, bitsText, cidr := strings.Cut(s, "/")
	a, ok := parseIPv6(ip)
	if !ok {
		return lo, hi, false
	}
	if !cidr {
		return a, a, true
	}
	bits, err := strconv.Atoi(bitsText)
	if err != nil || bits < 0 || bits > 128 {
		return lo, hi, false
	}
	lo, hi = a, a
	for i := range 16 {
		keep := min(max(bits-8*i, 0), 8) // bits of byte i inside the mask
		mask := byte(0xff) << (8 - keep) // 0 for keep 0: a shift past the width
		lo[i] &= mask
		hi[i] |= ^mask
	}
	return lo, hi, true
}

type matchIPv6Range struct{ f FilterIPv6Range }

func (m *matchIPv6Range) match(r *Row) bool {
	a, ok := parseIPv6(r.Get(m.f.Field))
	return ok && bytes.Compare(a[:], m.f.Lo[:]) >= 0 && bytes.Compare(a[:], m.f.Hi[:]) <= 0
}
