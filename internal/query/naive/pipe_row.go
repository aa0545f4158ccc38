package naive

import (
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/cespare/xxhash/v2"

	"github.com/spate-io/spate/internal/query"
)

// This file holds the pipes that change each row on its own, one function
// per pipe, written from VictoriaLogs' documentation and tests.

// coalesce is the first non-empty value of the listed fields (a pattern's
// matches by name), or the default.
func coalesce(p *query.PipeCoalesce, r row) string {
	for _, f := range p.Fields {
		names := []string{f}
		if strings.HasSuffix(f, "*") {
			names = nil
			for name := range r {
				if matchPattern(f, name) {
					names = append(names, name)
				}
			}
			sort.Strings(names)
		}
		for _, name := range names {
			if r[name] != "" {
				return r[name]
			}
		}
	}
	return p.Default
}

// colorSequence is an ANSI escape sequence: ESC '[', parameter bytes,
// intermediate bytes and a final byte, each part optional.
var colorSequence = regexp.MustCompile("\x1b\\[[\x30-\x3f]*[\x20-\x2f]*[\x30-\x7e]?")

func decolorize(v string) string { return colorSequence.ReplaceAllLiteralString(v, "") }

// hashValue is xxhash64 of v, its low 53 bits, in decimal.
func hashValue(v string) string {
	return strconv.FormatUint(xxhash.Sum64([]byte(v))%(1<<53), 10)
}

func jsonArrayConcat(v, delimiter string) string {
	return strings.Join(jsonArrayElements(v), delimiter)
}
