package cli

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/spate-io/spate/internal/query"
	"github.com/spate-io/spate/internal/segindex"
	"github.com/spate-io/spate/internal/segment"
)

// indexOptions are the flags of `spate index`.
type indexOptions struct {
	check bool
	force bool
}

func newIndexCmd() *cobra.Command {
	var opts indexOptions
	cmd := &cobra.Command{
		Use:   "index [flags] DIR",
		Short: "Check or rebuild the sidecar indexes of a spate serve data directory",
		Long: `Each compressed segment of a spate serve data directory (seg-N.ndjson.zst) has
a sidecar index beside it (seg-N.ndjson.zst.idx): where each 1 MiB block of
lines starts, the _time range, fields, streams, numeric ranges and token
blooms of each block, and hot columns (a columnar copy of its fields but
long, mostly distinct ids: level, service, status, latency, path, the
message...). Queries use it to answer stats without decompressing or
parsing lines, and to skip the blocks their filter rules out.

The index is a cache of the segment, never trusted over it: a sidecar that is
missing, truncated, damaged, of another version or older than its segment is
ignored by queries, which read the segment instead, and spate serve rebuilds
it when it starts. This command does the same by hand, on a directory no
server has open: it compresses sealed plain segments and rewrites every
compressed segment without a usable sidecar as independent frames with a
fresh sidecar. The lines are never changed.

--check only reports the state of each sidecar.`,
		Example: `  # rebuild what is missing or stale, after copying a data directory
  spate index /var/lib/spate

  # what each sidecar holds, and which cannot be used
  spate index --check /var/lib/spate

  # rebuild every sidecar from its segment
  spate index --force /var/lib/spate`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.check && opts.force {
				return usageError{errors.New("--check and --force do not go together")}
			}
			if opts.check {
				return runIndexCheck(args[0], cmd.OutOrStdout())
			}
			return runIndex(args[0], opts, cmd.ErrOrStderr())
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&opts.check, "check", false, "report each compressed segment's sidecar (usable, missing, stale or damaged, and what it holds) and change nothing")
	fl.BoolVar(&opts.force, "force", false, "remove every sidecar first, so that all are rebuilt")
	return cmd
}

// runIndex opens dir as a store with sidecars on and waits until every
// segment is compressed and indexed.
func runIndex(dir string, opts indexOptions, stderr io.Writer) error {
	if _, err := os.Stat(dir); err != nil {
		return err
	}
	if opts.force {
		files, err := segment.List(dir)
		if err != nil {
			return err
		}
		for _, f := range files {
			if err := os.Remove(filepath.Join(dir, f.Path+segindex.Ext)); err != nil && !errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("cannot remove sidecar: %w", err)
			}
		}
	}
	start := time.Now()
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	st, err := segment.Open(dir, segment.Options{IndexLines: query.NewIndexLines(), IndexNumbers: query.IndexNumbers, CompressDelay: -1, Logger: log})
	if errors.Is(err, segment.ErrLocked) {
		return fmt.Errorf("%s is open in a running spate serve, which rebuilds missing sidecars itself when it starts: %w", dir, err)
	}
	if err != nil {
		return err
	}
	total := st.Stats().CompressPending
	last := time.Now()
	for st.Stats().CompressPending > 0 {
		time.Sleep(20 * time.Millisecond)
		if time.Since(last) >= 5*time.Second {
			fmt.Fprintf(stderr, "spate index: %d of %d segments to go\n", st.Stats().CompressPending, total)
			last = time.Now()
		}
	}
	if err := st.Close(); err != nil {
		return err
	}
	var zst, idx, n int64
	files, err := segment.List(dir)
	if err != nil {
		return err
	}
	for _, f := range files {
		if !f.Compressed {
			continue
		}
		n++
		zst += f.Size
		if fi, err := os.Stat(filepath.Join(dir, f.Path+segindex.Ext)); err == nil {
			idx += fi.Size()
		}
	}
	fmt.Fprintf(stderr, "spate index: %d segments compressed or indexed in %s; %d compressed segments take %s, their sidecars %s\n",
		total, formatSeconds(time.Since(start)), n, formatSize(zst), formatSize(idx))
	return nil
}

// runIndexCheck reports the sidecar of every compressed segment in dir.
func runIndexCheck(dir string, w io.Writer) error {
	files, err := segment.List(dir)
	if err != nil {
		return err
	}
	bad := 0
	for _, f := range files {
		if !f.Compressed {
			fmt.Fprintf(w, "%s: plain (open, or sealed and not compressed yet): no sidecar\n", f.Path)
			continue
		}
		state, err := checkSidecar(filepath.Join(dir, f.Path))
		if err != nil {
			bad++
			fmt.Fprintf(w, "%s: %v\n", f.Path, err)
			continue
		}
		fmt.Fprintf(w, "%s: %s\n", f.Path, state)
	}
	if bad > 0 {
		fmt.Fprintf(w, "%d sidecars cannot be used: queries read those segments' lines; `spate index %s` (or the next spate serve start) rebuilds them\n", bad, dir)
	}
	return nil
}

// checkSidecar opens the sidecar of the .zst at path and describes it.
func checkSidecar(path string) (string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	f, err := os.Open(path + segindex.Ext)
	if errors.Is(err, os.ErrNotExist) {
		return "", errors.New("no sidecar")
	}
	if err != nil {
		return "", err
	}
	ifi, err := f.Stat()
	if err != nil {
		f.Close()
		return "", err
	}
	ix, err := segindex.Open(f, fi.Size(), fi.ModTime().UnixNano())
	if err != nil {
		return "", fmt.Errorf("sidecar cannot be used: %w", err)
	}
	defer ix.Close()
	cols, timed := 0, 0
	for _, b := range ix.Blocks {
		cols += len(b.Columns)
		if b.Flags&segindex.FlagTime != 0 {
			timed++
		}
	}
	return fmt.Sprintf("ok: %d blocks, %s lines (%s), %d fields, %d columns, %d blocks with a _time range; sidecar %s beside %s",
		len(ix.Blocks), formatThousands(ix.Rows), formatSize(ix.RawSize), len(ix.Fields), cols, timed, formatSize(ifi.Size()), formatSize(fi.Size())), nil
}
