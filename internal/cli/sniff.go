package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/spate-io/spate/internal/fileread"
	"github.com/spate-io/spate/internal/query"
	"github.com/spate-io/spate/internal/storescan"
)

// sniffBytes is how much of each input is read to guess its format.
const sniffBytes = 64 << 10

// inputFormats are the values of --input-format.
var inputFormats = []string{"auto", "json", "logfmt", "csv", "tsv", "syslog", "plain"}

// parseInputFormat reads --input-format: the format it forces, or auto.
func parseInputFormat(spec string) (forced query.InputFormat, auto bool, err error) {
	switch spec {
	case "", "auto":
		return forced, true, nil
	case "json":
	case "logfmt":
		forced.Kind = query.FormatLogfmt
	case "plain":
		forced.Kind = query.FormatPlain
	case "syslog":
		forced.Kind = query.FormatSyslog
	case "csv", "tsv":
		forced.Kind = query.FormatCSV
		forced.Comma = ','
		if spec == "tsv" {
			forced.Comma = '\t'
		}
	default:
		return forced, false, usagef("invalid --input-format %q: want %s", spec, strings.Join(inputFormats, ", "))
	}
	return forced, false, nil
}

// sniffedInputs is what sniffInputs kept.
type sniffedInputs struct {
	names   []string
	formats []query.InputFormat
	// skipped counts inputs that could not be read (each named on stderr);
	// binary, files passed over for a NUL byte.
	skipped, binary int
}

// sniffInputs decides the format of each input (--input-format, or a
// guess from its first 64 KiB when auto) and leaves out binary files
// (unless readBinary) and files that cannot be opened, saying so on w.
// stdin, FIFOs and devices are not read ahead: they are JSON or plain
// text unless the format is forced. Store segments are NDJSON.
func sniffInputs(names []string, spec string, readBinary bool, store *storescan.Inputs, w io.Writer) (*sniffedInputs, error) {
	out := &sniffedInputs{}
	forced, auto, err := parseInputFormat(spec)
	if err != nil {
		return nil, err
	}
	for _, name := range names {
		if name == "-" || store.Holds([]string{name}) {
			if forced.Kind == query.FormatCSV && name == "-" {
				return nil, usagef("--input-format %s reads the header from each file's first line: give files, not stdin", spec)
			}
			f := forced
			if name != "-" {
				f = query.InputFormat{}
			}
			out.names, out.formats = append(out.names, name), append(out.formats, f)
			continue
		}
		head, regular, err := readHead(name)
		if err != nil {
			var pe *fs.PathError
			if errors.As(err, &pe) {
				err = pe.Err // the name is said already
			}
			fmt.Fprintf(w, "spate: %s: %v; skipped\n", name, err)
			out.skipped++
			continue
		}
		f := forced
		if regular {
			sniffed, binary := query.Sniff(head)
			if binary && !readBinary {
				fmt.Fprintf(w, "spate: %s: binary file (a NUL byte in its first %d KiB); skipped (--binary reads it)\n", name, sniffBytes>>10)
				out.binary++
				continue
			}
			switch {
			case auto:
				f = sniffed
			case forced.Kind == query.FormatCSV:
				f.Header = csvHeader(head, forced.Comma)
				if len(f.Header) == 0 {
					fmt.Fprintf(w, "spate: %s: no header line for --input-format %s; skipped\n", name, spec)
					out.skipped++
					continue
				}
			}
		}
		out.names, out.formats = append(out.names, name), append(out.formats, f)
	}
	return out, nil
}

// readHead returns the first sniffBytes of the named file, decompressed
// when it is gzip, zstd, bzip2 or xz (by its first bytes, not its name);
// regular is false for FIFOs and devices, which are not
// read ahead (that would take their data).
func readHead(name string) (head []byte, regular bool, err error) {
	// Stat first: opening a FIFO would wait for a writer, and closing it
	// could cost the writer its data.
	if fi, err := os.Stat(name); err != nil {
		return nil, false, err
	} else if !fi.Mode().IsRegular() {
		return nil, false, nil
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	// Compressed files are known by their first bytes, as the scan knows
	// them, whatever their names.
	c, err := fileread.DetectFile(f)
	if err != nil {
		return nil, false, err
	}
	r, release, err := fileread.Decompress(c, f)
	if err != nil {
		return nil, false, err
	}
	defer release()
	head = make([]byte, sniffBytes)
	n, err := io.ReadFull(r, head)
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return nil, false, err
	}
	return head[:n], true, nil
}

// csvHeader returns the names on the first line of head, split by comma.
func csvHeader(head []byte, comma byte) []string {
	line, _, ok := strings.Cut(string(head), "\n")
	if !ok && len(head) >= sniffBytes {
		return nil
	}
	line = strings.TrimSuffix(line, "\r")
	if strings.TrimSpace(line) == "" {
		return nil
	}
	return query.SplitHeader(line, comma)
}
