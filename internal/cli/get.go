package cli

import (
	"fmt"
	"io"
	"path"
	"time"

	"github.com/spf13/cobra"

	"github.com/spate-io/spate/internal/get"
)

func newGetCmd() *cobra.Command {
	var (
		output      string
		connections int
		chunk       sizeFlag = 4 << 20
		sum         string
		retries     int
		progress    bool
	)
	cmd := &cobra.Command{
		Use:   "get URL [-o FILE]",
		Short: "Download a file with parallel ranged requests, resumable and verified",
		Long: `Download URL to FILE (default: the last part of the URL's path) with
--connections ranged GETs at once, each --chunk-size bytes.

FILE.spate-get records the chunks done: if the download is interrupted,
running the same command again fetches only what is missing (and removes
the side file at the end). Every ranged request carries If-Range with the
file's ETag, so a file that changed on the server is fetched anew instead of
mixing versions. Transport errors, 5xx and 429 are retried --retries times
with backoff, honouring Retry-After. A server without ranges gets one plain
GET (written to FILE.part, then renamed). --sha256 checks the result.

Examples:
  spate get http://127.0.0.1:9428/files/big.iso
  spate get -o logs.zst --connections 8 --chunk-size 8MiB https://host/logs.zst
  spate get --sha256 9f86d0... https://host/release.tar.gz`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			url := args[0]
			if output == "" {
				output = path.Base(url)
				if output == "" || output == "/" || output == "." {
					return usagef("cannot name the output after %s: give -o FILE", url)
				}
			}
			if connections <= 0 {
				return usagef("--connections: want 1 or more, got %d", connections)
			}
			stderr := cmd.ErrOrStderr()
			opts := get.Options{URL: url, Output: output, Connections: connections, ChunkSize: int64(chunk), SHA256: sum, Retries: retries}
			if progress || !cmd.Flags().Changed("progress") && isTerminal(stderr) {
				start := time.Now()
				opts.Progress = func(done, total int64) { printProgress(stderr, done, total, start) }
			}
			start := time.Now()
			res, err := get.Download(cmd.Context(), opts)
			if opts.Progress != nil {
				fmt.Fprintln(stderr)
			}
			if err != nil {
				return fmt.Errorf("get %s: %w (run again to resume)", url, err)
			}
			d := time.Since(start)
			how := fmt.Sprintf("%d connections", connections)
			if !res.Ranged {
				how = "one request (the server has no ranges)"
			}
			fmt.Fprintf(stderr, "spate get: %s: %s in %.2f s (%.0f MB/s), %s, %d requests",
				output, formatSize(res.Size), d.Seconds(), float64(res.Fetched)/d.Seconds()/1e6, how, res.Requests)
			if res.Resumed > 0 {
				fmt.Fprintf(stderr, ", %d chunks already done", res.Resumed)
			}
			if res.Restarted {
				fmt.Fprint(stderr, ", started over (the file changed)")
			}
			if sum != "" {
				fmt.Fprint(stderr, ", sha256 ok")
			}
			fmt.Fprintln(stderr)
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&output, "output", "o", "", "file to write (default: the URL's last path element)")
	fl.IntVar(&connections, "connections", 4, "ranged requests at once")
	fl.Var(&chunk, "chunk-size", "bytes per ranged request")
	fl.StringVar(&sum, "sha256", "", "hex SHA-256 the downloaded file must have")
	fl.IntVar(&retries, "retries", 5, "times one request is tried again after an error, a 5xx or a 429")
	fl.BoolVar(&progress, "progress", false, "show bytes done, MB/s and % on stderr (default: on when stderr is a terminal)")
	return cmd
}

func printProgress(w io.Writer, done, total int64, start time.Time) {
	rate := float64(done) / max(time.Since(start).Seconds(), 1e-3) / 1e6
	if total > 0 {
		fmt.Fprintf(w, "\r%s / %s  %5.1f%%  %.0f MB/s ", formatSize(done), formatSize(total), 100*float64(done)/float64(total), rate)
		return
	}
	fmt.Fprintf(w, "\r%s  %.0f MB/s ", formatSize(done), rate)
}
