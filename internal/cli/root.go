// Package cli implements the spate command line: one cobra command per file,
// each owning its flags, help text and a run function.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
)

// Exit codes returned by Run.
const (
	ExitOK          = 0   // success
	ExitFailure     = 1   // a runtime or query error
	ExitUsage       = 2   // bad flags or arguments
	ExitInterrupted = 130 // stopped by Ctrl-C (SIGINT) or SIGTERM, as shells report it
)

// usageError marks an error as a usage problem (exit code 2).
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// usagef returns an error that makes Run exit with ExitUsage.
func usagef(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

// Run executes the spate command line with args (without the program name),
// writing results to stdout and diagnostics to stderr. It returns the
// process exit code.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := newRootCmd(stdout, stderr)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return ExitOK
	}
	if ctx.Err() != nil && errors.Is(err, context.Canceled) {
		// Stopped by a signal: no "context canceled" error to puzzle over.
		fmt.Fprintln(stderr, "spate: interrupted")
		return ExitInterrupted
	}
	fmt.Fprintf(stderr, "spate: %v\n", err)
	var ue usageError
	if errors.As(err, &ue) || isCobraUsageError(err) {
		return ExitUsage
	}
	return ExitFailure
}

func newRootCmd(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "spate",
		Short: "Fast queries, serving and I/O benchmarks for logs on disk",
		Long: `spate reads big log files with the fastest I/O paths Go has.

  spate query    filter and aggregate NDJSON and plain-text logs with LogsQL
  spate serve    ingest logs over HTTP into durable segment files, query
                 them as VictoriaLogs, serve files and take resumable uploads
  spate get      download with parallel ranged, resumable, verified requests
  spate gen      make deterministic, realistic NDJSON/CSV/logfmt log data
  spate bench    measure reads, writes, queries, ingestion and HTTP serving
  spate demo     run the above on a cached sample and show what to try next`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       versionLine(),
	}
	root.SetVersionTemplate("{{.Version}}\n")
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return usageError{err}
	})
	root.AddCommand(newQueryCmd(), newServeCmd(), newConsumeCmd(), newGetCmd(), newGenCmd(), newBenchCmd(), newDemoCmd(), newIndexCmd())
	return root
}

// isCobraUsageError reports whether err is one of cobra's argument or
// command-lookup errors, which carry no type of their own.
func isCobraUsageError(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown command", "unknown flag", "unknown shorthand", "accepts ", "requires at least", "requires exactly", "invalid argument"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}
