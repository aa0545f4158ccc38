// Command spate filters, aggregates, serves and benchmarks logs on disk.
//
// See the README or `spate --help` for usage.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/spate-io/spate/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
