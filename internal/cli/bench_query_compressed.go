package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// literalBenchQuery is the standard query with a literal filter, the one
// compared with "DECOMPRESSOR -dc FILE | rg -c timeout".
const literalBenchQuery = `~"timeout" | stats count()`

// benchCodec is a compression --compressed can measure.
type benchCodec struct {
	name string   // gzip, zstd
	ext  string   // .gz, .zst
	tool []string // the command line tool that decompresses to stdout
}

var benchCodecs = []benchCodec{
	{"gzip", ".gz", []string{"gzip", "-dc"}},
	{"zstd", ".zst", []string{"zstd", "-dc"}},
}

// benchCompressedRow is the report for one query on one compressed copy.
type benchCompressedRow struct {
	Query         string             `json:"query"`
	MedianSeconds float64            `json:"median_seconds"`
	PlainSeconds  float64            `json:"plain_median_seconds"`
	SpeedVsPlain  float64            `json:"speed_vs_plain"` // plain seconds / these seconds
	Rounds        []benchQueryResult `json:"rounds"`
}

// benchBaseline is the time of the same literal count with the codec's
// own tool piped into ripgrep.
type benchBaseline struct {
	Command       string    `json:"command"`
	Count         int64     `json:"count"`
	MedianSeconds float64   `json:"median_seconds"`
	Rounds        []float64 `json:"rounds_seconds"`
	// SpateSpeedup is the baseline's median over spate's for the same
	// query on the same file.
	SpateSpeedup float64 `json:"spate_speedup"`
}

type benchCompressed struct {
	Codec      string               `json:"codec"`
	File       string               `json:"file"`
	Bytes      int64                `json:"bytes"`
	Queries    []benchCompressedRow `json:"queries"`
	Baseline   *benchBaseline       `json:"baseline,omitempty"`
	NoBaseline string               `json:"no_baseline,omitempty"`
}

// parseCodecs checks a --compressed list.
func parseCodecs(list []string) ([]benchCodec, error) {
	var out []benchCodec
	for _, name := range list {
		i := slices.IndexFunc(benchCodecs, func(c benchCodec) bool { return c.name == name })
		if i < 0 {
			return nil, fmt.Errorf("unknown compression %q: want gzip or zstd", name)
		}
		out = append(out, benchCodecs[i])
	}
	return out, nil
}

// compressedCopy returns a copy of file compressed with c (gzip level 6 or
// zstd level 3, what gzip and zstd use by default) in dir, made once and
// kept while it is newer than file.
func compressedCopy(ctx context.Context, file, dir string, c benchCodec, errw io.Writer) (string, error) {
	dst := filepath.Join(dir, filepath.Base(file)+c.ext)
	src, err := os.Stat(file)
	if err != nil {
		return "", err
	}
	if fi, err := os.Stat(dst); err == nil && fi.ModTime().After(src.ModTime()) && fi.Size() > 0 {
		fmt.Fprintf(errw, "bench query: using %s\n", dst)
		return dst, nil
	}
	fmt.Fprintf(errw, "bench query: compressing %s with %s into %s ...\n", file, c.name, dst)
	in, err := os.Open(file)
	if err != nil {
		return "", err
	}
	defer in.Close()
	tmp := dst + ".tmp"
	out, err := os.Create(tmp)
	if err != nil {
		return "", fmt.Errorf("cannot write a compressed copy: %w", err)
	}
	defer os.Remove(tmp)
	var w io.WriteCloser
	if c.name == "gzip" {
		w, err = gzip.NewWriterLevel(out, 6)
	} else {
		w, err = zstd.NewWriter(out, zstd.WithEncoderLevel(zstd.SpeedDefault))
	}
	if err == nil {
		_, err = io.Copy(w, readerCtx{ctx, in})
		if cerr := w.Close(); err == nil {
			err = cerr
		}
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("cannot write %s: %w", tmp, err)
	}
	return dst, os.Rename(tmp, dst)
}

// readerCtx stops a copy when ctx is done.
type readerCtx struct {
	ctx context.Context
	r   io.Reader
}

func (r readerCtx) Read(p []byte) (int, error) {
	if err := r.ctx.Err(); err != nil {
		return 0, err
	}
	return r.r.Read(p)
}

// runBaseline times "TOOL -dc FILE | rg -c timeout" rounds times.
func runBaseline(ctx context.Context, c benchCodec, file string, rounds int) (*benchBaseline, string) {
	tool, err := exec.LookPath(c.tool[0])
	if err != nil {
		return nil, c.tool[0] + " is not installed"
	}
	rg, err := exec.LookPath("rg")
	if err != nil {
		return nil, "rg (ripgrep) is not installed"
	}
	b := &benchBaseline{Command: fmt.Sprintf("%s %s | rg -c timeout", strings.Join(c.tool, " "), file)}
	for range rounds {
		dec := exec.CommandContext(ctx, tool, append(c.tool[1:], file)...)
		grep := exec.CommandContext(ctx, rg, "-c", "timeout")
		pipe, err := dec.StdoutPipe()
		if err != nil {
			return nil, err.Error()
		}
		grep.Stdin = pipe
		var out, errb bytes.Buffer
		grep.Stdout, grep.Stderr, dec.Stderr = &out, &errb, &errb
		start := time.Now()
		if err := dec.Start(); err != nil {
			return nil, err.Error()
		}
		gerr := grep.Run()
		derr := dec.Wait()
		secs := time.Since(start).Seconds()
		if ee, ok := gerr.(*exec.ExitError); ok && ee.ExitCode() == 1 && out.Len() == 0 {
			gerr = nil // no line matched
			out.WriteString("0")
		}
		if derr != nil || gerr != nil {
			return nil, fmt.Sprintf("%s failed: %v %v %s", b.Command, derr, gerr, strings.TrimSpace(errb.String()))
		}
		n, err := strconv.ParseInt(strings.TrimSpace(out.String()), 10, 64)
		if err != nil {
			return nil, fmt.Sprintf("%s printed %q", b.Command, out.String())
		}
		b.Count = n
		b.Rounds = append(b.Rounds, secs)
	}
	b.MedianSeconds = median(b.Rounds)
	return b, ""
}

// benchCompressedRuns times every query on a compressed copy of file per
// codec, beside the plain rows already measured (a round that reads other
// lines or returns other rows than the plain file's is an error), and the
// literal query against its codec's tool piped into rg.
func benchCompressedRuns(ctx context.Context, o *benchQueryOpts, exe, file, dir string, plain []benchQueryRow, codecs []benchCodec, errw io.Writer) ([]benchCompressed, error) {
	var out []benchCompressed
	for _, c := range codecs {
		cfile, err := compressedCopy(ctx, file, dir, c, errw)
		if err != nil {
			return nil, err
		}
		if _, err := warmFile(cfile); err != nil {
			return nil, err
		}
		bc := benchCompressed{Codec: c.name, File: cfile}
		if fi, err := os.Stat(cfile); err == nil {
			bc.Bytes = fi.Size()
		}
		var literal *benchQueryResult
		for _, p := range plain {
			fmt.Fprintf(errw, "bench query: %s on %s ", p.Query, c.ext)
			row := benchCompressedRow{Query: p.Query, PlainSeconds: p.MedianSeconds}
			var secs []float64
			for range o.repeat {
				res, err := runQueryChild(ctx, exe, cfile, p.Query, o.workers, "auto")
				if err != nil {
					return nil, err
				}
				// The copy must read as the file does.
				if pr := p.Rounds[0]; res.Lines != pr.Lines || res.Matched != pr.Matched || res.Rows != pr.Rows {
					return nil, fmt.Errorf("%q on %s: %d lines, %d matched, %d rows; on the plain file %d, %d, %d", p.Query, cfile, res.Lines, res.Matched, res.Rows, pr.Lines, pr.Matched, pr.Rows)
				}
				row.Rounds = append(row.Rounds, res)
				secs = append(secs, res.Seconds)
				fmt.Fprint(errw, ".")
			}
			fmt.Fprintln(errw)
			row.MedianSeconds = median(secs)
			row.SpeedVsPlain = row.PlainSeconds / row.MedianSeconds
			if p.Query == literalBenchQuery {
				literal = &row.Rounds[0]
			}
			bc.Queries = append(bc.Queries, row)
		}
		if literal == nil {
			bc.NoBaseline = "the queries do not include " + literalBenchQuery
		} else {
			fmt.Fprintf(errw, "bench query: %s -dc | rg -c timeout ", c.tool[0])
			bc.Baseline, bc.NoBaseline = runBaseline(ctx, c, cfile, o.repeat)
			fmt.Fprintln(errw)
			if b := bc.Baseline; b != nil {
				if b.Count != literal.Matched {
					return nil, fmt.Errorf("%s counted %d lines, spate query %q %d", b.Command, b.Count, literalBenchQuery, literal.Matched)
				}
				i := slices.IndexFunc(bc.Queries, func(r benchCompressedRow) bool { return r.Query == literalBenchQuery })
				b.SpateSpeedup = b.MedianSeconds / bc.Queries[i].MedianSeconds
			}
		}
		out = append(out, bc)
	}
	return out, nil
}

// printCompressed writes the --compressed tables.
func printCompressed(w io.Writer, runs []benchCompressed) error {
	for _, bc := range runs {
		fmt.Fprintf(w, "\n%s copy: %s (%s)\n\n", bc.Codec, bc.File, formatSize(bc.Bytes))
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "seconds\tplain seconds\tspeed vs plain\t query")
		for _, r := range bc.Queries {
			fmt.Fprintf(tw, "%.3f\t%.3f\t%.2fx\t %s\n", r.MedianSeconds, r.PlainSeconds, r.SpeedVsPlain, r.Query)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		if b := bc.Baseline; b != nil {
			fmt.Fprintf(w, "baseline: %s: %.3f s (%d lines); spate is %.2fx its speed\n", b.Command, b.MedianSeconds, b.Count, b.SpateSpeedup)
		} else {
			fmt.Fprintf(w, "no baseline: %s\n", bc.NoBaseline)
		}
	}
	return nil
}
