// Package logstream is VictoriaLogs' notion of a log stream, shared by
// ingestion (which writes _stream and _stream_id into stored lines) and
// queries (which filter on them): the stream's tags, their text form
// ({name="value",...}, the _stream field) and the stream ID (the
// _stream_id field). Both are computed exactly as VictoriaLogs v1.52.1 does
// (lib/logstorage: StreamTags, streamID, hash128), so that spate and
// VictoriaLogs give the same stream the same _stream and _stream_id.
//
// Functions here are safe for concurrent use. The Append functions do not
// allocate beyond growing dst.
package logstream

import (
	"encoding/binary"
	"slices"
	"strconv"
	"strings"

	"github.com/cespare/xxhash/v2"
)

// Tag is one stream field and its value.
type Tag struct {
	Name, Value string
}

// Sort puts tags in canonical order: by name, then value. Both the text
// form and the ID are defined on sorted tags.
func Sort(tags []Tag) {
	slices.SortFunc(tags, func(a, b Tag) int {
		if c := strings.Compare(a.Name, b.Name); c != 0 {
			return c
		}
		return strings.Compare(a.Value, b.Value)
	})
}

// AppendText appends the _stream value of sorted tags: {name="value",...},
// each value quoted as Go's strconv.Quote does (VictoriaLogs' choice, not
// JSON's), "{}" for no tags.
func AppendText(dst []byte, tags []Tag) []byte {
	dst = append(dst, '{')
	for i, t := range tags {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, t.Name...)
		dst = append(dst, '=')
		dst = strconv.AppendQuote(dst, t.Value)
	}
	return append(dst, '}')
}

// AppendCanonical appends the canonical binary form of sorted tags that the
// ID hashes: the tag count, then each name and value, each as a uvarint
// length and the bytes (VictoriaLogs' StreamTags.MarshalCanonical).
func AppendCanonical(dst []byte, tags []Tag) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(tags)))
	for _, t := range tags {
		dst = binary.AppendUvarint(dst, uint64(len(t.Name)))
		dst = append(dst, t.Name...)
		dst = binary.AppendUvarint(dst, uint64(len(t.Value)))
		dst = append(dst, t.Value...)
	}
	return dst
}

// AppendID appends the _stream_id (48 hex digits) of a stream of the tenant
// (accountID, projectID) whose canonical tags are canonical (see
// AppendCanonical): 16 hex digits of accountID<<32|projectID, then the
// 128-bit hash of the tags: xxhash64 of canonical, and xxhash64 of
// canonical followed by "magic!" (VictoriaLogs' hash128).
func AppendID(dst []byte, accountID, projectID uint32, canonical []byte) []byte {
	d := xxhash.New()
	d.Write(canonical)
	hi := d.Sum64()
	d.WriteString("magic!")
	lo := d.Sum64()
	dst = appendHex64(dst, uint64(accountID)<<32|uint64(projectID))
	dst = appendHex64(dst, hi)
	return appendHex64(dst, lo)
}

func appendHex64(dst []byte, n uint64) []byte {
	const digits = "0123456789abcdef"
	for shift := 60; shift >= 0; shift -= 4 {
		dst = append(dst, digits[(n>>uint(shift))&15])
	}
	return dst
}

// Parse parses a _stream value, {name="value",...} with Go-quoted values,
// appending its tags to dst in the order written. It reports false for
// anything else, as VictoriaLogs' streamName.parse does; "{}" has no tags.
// The names alias s; values alias s unless they hold escapes.
func Parse(dst []Tag, s string) ([]Tag, bool) {
	if len(s) < 2 || s[0] != '{' || s[len(s)-1] != '}' {
		return dst, false
	}
	s = s[1 : len(s)-1]
	if s == "" {
		return dst, true
	}
	for {
		n := strings.IndexByte(s, '=')
		if n < 0 {
			return dst, false
		}
		name := s[:n]
		s = s[n+1:]
		if s == "" || s[0] != '"' {
			return dst, false
		}
		q, err := strconv.QuotedPrefix(s)
		if err != nil {
			return dst, false
		}
		s = s[len(q):]
		value := q[1 : len(q)-1]
		if strings.IndexByte(value, '\\') >= 0 {
			if value, err = strconv.Unquote(q); err != nil {
				return dst, false
			}
		}
		dst = append(dst, Tag{Name: name, Value: value})
		if s == "" {
			return dst, true
		}
		if s[0] != ',' {
			return dst, false
		}
		s = s[1:]
	}
}

// Value returns the value of the tag called name, or "" if tags has none,
// as stream filters read a missing tag.
func Value(tags []Tag, name string) string {
	for _, t := range tags {
		if t.Name == name {
			return t.Value
		}
	}
	return ""
}
