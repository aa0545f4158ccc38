// Command spate filters, aggregates, serves and benchmarks logs on disk.
//
// See the README or `spate --help` for usage.
package main

import (
	"os"

	"github.com/spate-io/spate/internal/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:]))
}
