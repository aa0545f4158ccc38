package gen

import "fmt"

// format selects the line encoding. The block loop switches on it once per
// block and then calls one concrete append function per line.
type format uint8

const (
	formatNDJSON format = iota
	formatCSV
	formatLogfmt
)

// Formats returns the names of the output formats, the default first. The
// caller owns the returned slice.
func Formats() []string { return []string{"ndjson", "csv", "logfmt"} }

// parseFormat maps a format name to a format; "" means ndjson.
func parseFormat(name string) (format, error) {
	switch name {
	case "", "ndjson":
		return formatNDJSON, nil
	case "csv":
		return formatCSV, nil
	case "logfmt":
		return formatLogfmt, nil
	}
	return 0, fmt.Errorf("unknown format %q: want ndjson, csv or logfmt", name)
}
