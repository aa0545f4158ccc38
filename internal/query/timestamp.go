package query

// This file exports the pieces of the data model that ingestion shares with
// queries, so that a line stored by `spate serve` reads back the same way.

// ParseTimestamp parses a log's time value the way queries read _time: RFC
// 3339 with any offset and fraction, or a Unix timestamp whose unit (s, ms,
// µs, ns) is guessed from its magnitude. s is the string's contents or the
// number's text. It returns Unix nanoseconds.
func ParseTimestamp(s string) (int64, bool) { return parseTimeValue(s) }

// AppendTimestamp appends ns as queries print _time: RFC 3339 in UTC with
// nanoseconds, trailing fractional zeros trimmed.
func AppendTimestamp(dst []byte, ns int64) []byte { return appendTime(dst, ns) }

// DefaultTimeFields returns the fields a log's time is taken from when no
// time field is named, in order of preference.
func DefaultTimeFields() []string { return append([]string(nil), defaultTimeFields...) }

// DefaultMsgFields returns the fields a log's message is taken from when no
// message field is named, in order of preference.
func DefaultMsgFields() []string { return append([]string(nil), defaultMsgFields...) }
